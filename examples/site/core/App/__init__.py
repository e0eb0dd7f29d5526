"""The site's application files: declarations (`api.py`), tables (`models.py`), routes, demo rows."""
