"""API tokens: their format, their store, and the record a request authenticates as."""

from pb_headless.tokens.format import generate, hash_token, is_well_formed
from pb_headless.tokens.store import TokenError, TokenInfo, TokenStore

__all__ = ["TokenError", "TokenInfo", "TokenStore", "generate", "hash_token", "is_well_formed"]
