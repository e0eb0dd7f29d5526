"""The five operations: the scope each needs, the methods that ask for it and where it is served."""

from __future__ import annotations

from pb_headless.operations import READ_OPERATIONS, WRITE_OPERATIONS, Operation, PathKind, ScopeKind


def test_operations_compare_equal_to_their_declaration_names() -> None:
    assert list(Operation) == ["list", "show", "create", "update", "delete"]


def test_list_and_show_need_the_read_scope_and_the_rest_the_write_scope() -> None:
    assert {Operation.LIST, Operation.SHOW} == READ_OPERATIONS
    assert {Operation.CREATE, Operation.UPDATE, Operation.DELETE} == WRITE_OPERATIONS
    assert {operation.scope_kind for operation in WRITE_OPERATIONS} == {ScopeKind.WRITE}


def test_each_request_addresses_one_operation_and_head_is_served_as_get() -> None:
    assert Operation.addressed_by(PathKind.COLLECTION, "GET") is Operation.LIST
    assert Operation.addressed_by(PathKind.COLLECTION, "HEAD") is Operation.LIST
    assert Operation.addressed_by("collection", "POST") is Operation.CREATE
    assert Operation.addressed_by(PathKind.RECORD, "GET") is Operation.SHOW
    assert Operation.addressed_by(PathKind.RECORD, "PATCH") is Operation.UPDATE
    assert Operation.addressed_by(PathKind.RECORD, "DELETE") is Operation.DELETE


def test_put_post_on_a_record_and_patch_on_a_collection_address_nothing() -> None:
    assert Operation.addressed_by(PathKind.RECORD, "PUT") is None
    assert Operation.addressed_by(PathKind.RECORD, "POST") is None
    assert Operation.addressed_by(PathKind.COLLECTION, "PATCH") is None


def test_the_allow_header_lists_the_methods_of_the_allowed_operations_on_that_path() -> None:
    assert Operation.allowed_methods(PathKind.COLLECTION, {"list"}) == ("GET", "HEAD")
    assert Operation.allowed_methods(PathKind.RECORD, {"list", "update", "delete"}) == ("PATCH", "DELETE")
    assert Operation.allowed_methods(PathKind.RECORD, set()) == ()
