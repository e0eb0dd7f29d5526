"""The API sub-application and its request pipeline."""

from pb_headless.api.application import PREFIX, HeadlessAPI

__all__ = ["PREFIX", "HeadlessAPI"]
