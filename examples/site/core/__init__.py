"""The example site's own code folder (`PB_SITE_DIR/core`), imported as the top-level package `core`."""
