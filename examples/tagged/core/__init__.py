"""The site's own code; the site folder is on `sys.path`, so this imports as `core`."""
