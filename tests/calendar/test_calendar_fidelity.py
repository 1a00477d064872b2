"""Fidelity to Google Calendar API v3, checked against Google's own discovery document
(`calendar.v3.json`, shipped in the `google-api-python-client` wheel): for every implemented
method, the tool's argument names, types, required flags and enums against the method's
parameters and request body. What differs on purpose is listed in `DELIBERATE` (and in
docs/calendar_gym.md, "Fidelity"); anything else is a defect."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from calendar_gym import CalendarEnv

googleapiclient = pytest.importorskip("googleapiclient", reason="pip install -e '.[dev]'")
DOC = json.loads(
    (
        Path(googleapiclient.__file__).parent / "discovery_cache/documents/calendar.v3.json"
    ).read_text(encoding="utf-8")
)
OURS_ONLY = {"directory_search", "finish"}  # not API methods (documented tools of their own)

DELIBERATE: dict[str, str] = {
    # arguments we do not take (each is rejected as UNKNOWN_FIELD, never silently ignored)
    "unsupported": "conference data, attachments, labels, sync tokens, watch channels, "
    "events_import and the listed query parameters are out of scope (docs: Fidelity, Known "
    "limits)",
    # arguments we take that Google does not
    "calendarList_insert.summaryOverride/colorId/hidden/...": "CalendarListEntry fields are "
    "body fields in Google too (the body is the entry); same names",
    # required flags
    "body fields": "the discovery document marks required body fields per method "
    "(`annotations.required`); the calendar requires each of those, and also what the API "
    "rejects at run time without being annotated: calendars_update summary, acl_update role, "
    "an attendee's email",
    # enums
    "body enums": "body-field enums appear only in Google's descriptions ('Possible values "
    "are: ...'); they are parsed from there and must equal ours",
}
UNSUPPORTED = {
    "conferenceDataVersion", "supportsAttachments", "maxAttendees", "eventLabelVersion",
    "syncToken", "alwaysIncludeEmail", "privateExtendedProperty", "sharedExtendedProperty",
    "showHiddenInvitations", "showOwnOrganizationOnly",
}  # fmt: skip
"""v3 query parameters the calendar does not take (see DELIBERATE); every other one must be an
argument of its tool. Unsupported body fields need no list: an argument that is not a v3 field
fails the tests, and v3 fields we do not take are rejected as UNKNOWN_FIELD."""
TYPE_OF = {"string": "string", "integer": "integer", "boolean": "boolean", "array": "array",
           "object": "object", "number": "number", "any": None}  # fmt: skip


def _method(tool: str) -> dict[str, Any]:
    resource, _, name = tool.partition("_")
    return DOC["resources"][resource]["methods"][name]


def _body(method: dict[str, Any]) -> dict[str, Any]:
    ref = (method.get("request") or {}).get("$ref")
    return DOC["schemas"][ref]["properties"] if ref else {}


def _types(schema: dict[str, Any]) -> set[str]:
    if "type" in schema:
        t = schema["type"]
        return set(t) if isinstance(t, list) else {t}
    out: set[str] = set()
    for alt in schema.get("anyOf", []) + schema.get("oneOf", []):
        out |= _types(alt)
    if "$ref" in schema or "properties" in schema:
        out.add("object")
    return out - {"null"}


def _enum(schema: dict[str, Any]) -> set[str] | None:
    if "enum" in schema:
        return {str(v) for v in schema["enum"] if v is not None}
    for alt in schema.get("anyOf", []):
        found = _enum(alt)
        if found is not None:
            return found
    return None


TOOLS = sorted(n for n in CalendarEnv.tool_specs if n not in OURS_ONLY)


def test_every_tool_is_a_v3_method() -> None:
    assert len(TOOLS) >= 25
    for tool in TOOLS:
        assert _method(tool)["id"] == f"calendar.{tool.replace('_', '.')}", tool


@pytest.mark.parametrize("tool", TOOLS)
def test_arguments_match_the_discovery_document(tool: str) -> None:
    method = _method(tool)
    params, body = method.get("parameters", {}), _body(method)
    schema = CalendarEnv.tool_specs[tool].input_schema
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    defs = schema.get("$defs", {})
    for name, ours in props.items():
        google = params.get(name) or body.get(name)
        assert google is not None, f"{tool}.{name} is not a v3 parameter or body field"
        if "$ref" in ours:
            ours = defs.get(ours["$ref"].split("/")[-1], ours)
        want = TYPE_OF.get(google.get("type", "object" if "$ref" in google else "any"))
        if google.get("repeated"):  # a repeated query parameter is a list of its type
            want = "array"
        if want is not None and _types(ours):
            assert want in _types(ours), f"{tool}.{name}: {_types(ours)} vs {want}"
        enum = google.get("enum") or (google.get("items") or {}).get("enum")
        if enum:
            found = _enum(ours) or _enum(ours.get("items") or {})
            if found is None:
                found = next((_enum(a.get("items") or {}) for a in ours.get("anyOf", [])
                              if a.get("type") == "array"), None)  # fmt: skip
            assert found == set(enum), f"{tool}.{name} enum: {found} vs {set(enum)}"
    for name, google in params.items():
        if google.get("required"):
            assert name in required, f"{tool}: {name} is required in v3"
        elif name not in UNSUPPORTED:
            assert name in props, f"{tool}: v3 parameter {name} is missing"


def test_writer_without_private_access_writes_but_sees_private_events_as_busy(
    session: Any,
) -> None:
    cal = "c_wwpa0000000000000000000@group.calendar.google.com"
    patch = {
        "calendars": [{"id": cal, "summary": "Shared", "owner": "carol@acme.test",
                       "time_zone": "Europe/London"}],
        "acl": [{"calendar": cal, "scope": "user:alice@acme.test",
                 "role": "writerWithoutPrivateAccess"}],
        "events": [{"id": "secret0001", "calendar": cal, "summary": "Secret",
                    "start": "2026-03-05T12:00:00", "end": "2026-03-05T13:00:00",
                    "visibility": "private"}],
    }  # fmt: skip
    _, call = session(seed_patch=patch)
    item = call.ok("events_get", calendarId=cal, eventId="secret0001")
    assert "summary" not in item  # busy only
    start, end = {"dateTime": "2026-03-06T10:00:00Z"}, {"dateTime": "2026-03-06T11:00:00Z"}
    call.ok("events_insert", calendarId=cal, summary="Mine", start=start, end=end)
    denied = call.fail("acl_list", calendarId=cal)
    assert denied["code"] == "PERMISSION_DENIED" and denied["required_role"] == "writer"
    call.ok("calendarList_list", minAccessRole="writerWithoutPrivateAccess")  # a valid value
    assert call.ok("events_list", calendarId=cal, eventTypes=["focusTime"])["items"] == []
    assert call.ok("events_list", calendarId=cal, eventTypes=["default"])["items"]


@pytest.mark.parametrize(
    ("tool", "args", "kind"),
    [
        ("calendarList_list", {}, "calendar#calendarList"),
        ("acl_list", {"calendarId": "primary"}, "calendar#acl"),
        ("settings_list", {}, "calendar#settings"),
        ("events_list", {"calendarId": "primary"}, "calendar#events"),
    ],
)
def test_list_responses_carry_etag_and_sync_token(
    session: Any, tool: str, args: dict[str, Any], kind: str
) -> None:
    """v3 list responses (CalendarList, Acl, Settings, Events) have etag and nextSyncToken on
    the last page, nextPageToken before it; Events also has `updated`."""
    _, call = session()
    last = call.ok(tool, **args)
    assert last["kind"] == kind and last["etag"].startswith('"') and last["nextSyncToken"]
    assert "nextPageToken" not in last
    first = call.ok(tool, **args, maxResults=1)
    assert first["nextPageToken"] and "nextSyncToken" not in first
    assert first["etag"] != last["etag"]
    if kind == "calendar#events":
        assert last["updated"].endswith("Z")
    assert call.ok(tool, **args)["etag"] == last["etag"]  # deterministic


def _possible_values(google: dict[str, Any]) -> set[str] | None:
    """The enum a discovery description states ("Possible values are: - "x" - ...")."""
    text = google.get("description", "")
    if "Possible values" not in text:
        return None
    return set(re.findall(r'^\s*-\s*"([^"]+)"', text.split("Possible values", 1)[1], re.M))


def _resolve(ours: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Our schema node without `$ref` and without the `null` branch of an optional."""
    if "$ref" in ours:
        ours = {**defs[ours["$ref"].split("/")[-1]], **{k: v for k, v in ours.items()
                                                        if k != "$ref"}}  # fmt: skip
    real = [a for a in ours.get("anyOf", []) if a.get("type") != "null"]
    if len(real) == 1:
        return _resolve({**real[0], **{k: v for k, v in ours.items() if k != "anyOf"}}, defs)
    return ours


def _google_props(google: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in google:
        google = DOC["schemas"][google["$ref"]]
    return google.get("properties", {})


def _compare_body(
    method_id: str, path: str, ours: dict[str, Any], google: dict[str, Any],
    defs: dict[str, Any], seen: list[str],
) -> None:  # fmt: skip
    """Our object schema `ours` against Google's `google`, recursively (see DELIBERATE)."""
    props, gprops = ours.get("properties", {}), _google_props(google)
    required = set(ours.get("required", []))
    for name, sub in props.items():
        where = f"{path}.{name}" if path else name
        g = gprops.get(name)
        assert g is not None, f"{method_id}: {where} is not a field of Google's resource"
        seen.append(where)
        mine = _resolve(sub, defs)
        want = TYPE_OF.get(g.get("type", "object" if "$ref" in g else "any"))
        if want is not None and _types(mine):
            assert want in _types(mine), f"{method_id}: {where} {_types(mine)} vs {want}"
        values = _possible_values(g)
        if values is not None:
            assert _enum(mine) == values, f"{method_id}: {where} enum {_enum(mine)} vs {values}"
        if want == "object" and "properties" in mine:
            _compare_body(method_id, where, mine, g, defs, seen)
        elif want == "array":
            item, gitem = _resolve(mine.get("items", {}), defs), g.get("items", {})
            if "properties" in item:
                _compare_body(method_id, f"{where}[]", item, gitem, defs, seen)
    for name, g in gprops.items():
        if method_id in (g.get("annotations") or {}).get("required", []) and name in props:
            assert name in required, f"{method_id}: {path or ''}{name} is required in v3"
        elif method_id in (g.get("annotations") or {}).get("required", []) and not path:
            raise AssertionError(f"{method_id}: required v3 field {name} is missing")


@pytest.mark.parametrize("tool", TOOLS)
def test_body_fields_match_the_discovery_document_at_every_depth(tool: str) -> None:
    """Every body field we take, nested ones included, exists in Google's resource with the
    same type and (parsed from the description) the same enum; every field v3 annotates as
    required for this method is required here."""
    method = _method(tool)
    ref = (method.get("request") or {}).get("$ref")
    schema = CalendarEnv.tool_specs[tool].input_schema
    params = method.get("parameters", {})
    body_only = {
        "type": "object",
        "properties": {k: v for k, v in schema.get("properties", {}).items() if k not in params},
        "required": schema.get("required", []),
    }
    seen: list[str] = []
    if ref is not None:
        _compare_body(method["id"], "", body_only, {"$ref": ref}, schema.get("$defs", {}), seen)
    else:
        assert not body_only["properties"], f"{tool} takes body fields but v3 has no body"


def test_put_methods_require_what_v3_requires() -> None:
    """The three PUTs exist, and acl.update's annotated requirement (scope) holds."""
    for tool in ("acl_update", "calendarList_update", "calendars_update"):
        assert _method(tool)["httpMethod"] == "PUT" and tool in CalendarEnv.tool_specs
    assert {"calendarId", "ruleId", "scope", "role"} <= set(
        CalendarEnv.tool_specs["acl_update"].input_schema["required"]
    )
    assert {"calendarId", "summary"} <= set(
        CalendarEnv.tool_specs["calendars_update"].input_schema["required"]
    )
