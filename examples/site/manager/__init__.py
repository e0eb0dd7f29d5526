"""The site's own administration area under /mgr/: sign-in, dashboard and the table constructor."""
