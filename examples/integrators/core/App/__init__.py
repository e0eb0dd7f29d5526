"""The site-owned files a component upgrade never touches: models, API declarations, custom routes."""
