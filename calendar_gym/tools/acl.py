"""The `acl_*` tools: who may see or change a calendar. Reading the ACL needs writer, changing
it owner.

Rule ids are `user:EMAIL`, `group:EMAIL`, `domain:DOMAIN` or `default`. Sharing with a user adds
the calendar to their calendar list, so the grant is immediately usable by them.
"""

from __future__ import annotations

import sqlite3
from typing import Annotated, Any

from pydantic import Field

from calendar_gym.tools.context import CalendarContext
from calendar_gym.tools.models import AclRole, AclScope, CalendarId, MaxResults, PageToken
from calendar_gym.world.acl import RANK, Access
from calendar_gym.world.colors import CALENDAR_COLORS, calendar_color_for
from calendar_gym.world.errors import ApiError
from calendar_gym.world.eventdata import make_etag
from mcpgym import tool

__all__ = ["AclTools"]

RuleId = Annotated[
    str, Field(description="user:EMAIL, group:EMAIL, domain:DOMAIN or default (see acl_list).")
]


def _own_acl(mine: bool) -> dict[str, Any]:
    """Google's answer when the acting owner tries to change their own rule."""
    if not mine:
        return {}
    return {
        "google_reason": "cannotChangeOwnAcl",
        "google_message": "Cannot change your own access level.",
    }


class AclTools(CalendarContext):
    """Tool mixin: access control lists."""

    @staticmethod
    def _rule(row: sqlite3.Row) -> dict[str, Any]:
        scope: dict[str, Any] = {"type": row["scope_type"]}
        if row["scope_type"] != "default":
            scope["value"] = row["scope_value"]
        return {
            "kind": "calendar#aclRule",
            "etag": row["etag"],
            "id": row["rule_id"],
            "scope": scope,
            "role": row["role"],
        }

    def _find_rule(self, access: Access, rule_id: str) -> sqlite3.Row:
        row = self.store.one(
            "SELECT * FROM acl WHERE calendar_id = ? AND lower(rule_id) = lower(?)",
            (access.id, rule_id.strip()),
        )
        if row is not None:
            return row
        near = [
            r["rule_id"]
            for r in self.store.all(
                "SELECT rule_id FROM acl WHERE calendar_id = ? ORDER BY rule_id", (access.id,)
            )
            if rule_id.lower() in r["rule_id"].lower()
        ]
        hint = "Call acl_list to see the rule ids of this calendar."
        if near:
            hint = f"Rule ids look like 'user:bob@acme.test'; did you mean {near[0]!r}?"
        elif ":" not in rule_id and rule_id != "default":
            hint = (
                f"Rule ids carry their scope type: e.g. 'user:{rule_id}' or 'group:{rule_id}'. "
                "Call acl_list to see them."
            )
        raise ApiError(
            "NOT_FOUND",
            f"No ACL rule {rule_id!r} on calendar {access.id}.",
            field="ruleId",
            expected="a rule id from acl_list",
            got=rule_id,
            hint=hint,
            suggestion=near[0] if near else None,
        )

    def _guard_owner(self, access: Access, rule_id: str, new_role: str | None) -> None:
        owner = access.calendar["owner"]
        if rule_id.lower() == f"user:{owner}".lower() and (new_role is None or new_role != "owner"):
            raise ApiError(
                "FORBIDDEN_OPERATION",
                f"The rule giving the calendar's owner ({owner}) the owner role cannot be "
                + ("removed." if new_role is None else "lowered."),
                field="ruleId",
                expected="a rule other than the owner's own",
                got=rule_id,
                hint="Calendars always keep their owner; change other rules instead.",
                **_own_acl(owner == self.user),
            )

    @tool(annotations={"readOnlyHint": True})
    def acl_list(
        self,
        calendarId: CalendarId,
        maxResults: MaxResults = None,
        pageToken: PageToken = None,
        showDeleted: bool = False,
    ) -> dict[str, Any]:
        """List a calendar's sharing rules (needs writer: Google gives writers read access to
        the ACL)."""
        access = self.access(calendarId, "writer", "see its sharing rules", strict=True)
        rows = self.store.all(
            "SELECT * FROM acl WHERE calendar_id = ? ORDER BY rule_id", (access.id,)
        )
        items = [self._rule(r) for r in rows if showDeleted or r["role"] != "none"]
        page, token = self.page(items, maxResults, pageToken, default=100)
        return self.collection("calendar#acl", page, token)

    @tool(annotations={"readOnlyHint": True})
    def acl_get(self, calendarId: CalendarId, ruleId: RuleId) -> dict[str, Any]:
        """Get one sharing rule (needs writer)."""
        access = self.access(calendarId, "writer", "see its sharing rules", strict=True)
        return self._rule(self._find_rule(access, ruleId))

    @tool
    def acl_insert(
        self,
        calendarId: CalendarId,
        role: Annotated[AclRole, Field(description="The role to grant.")],
        scope: Annotated[AclScope, Field(description='Whom: {"type": "user", "value": EMAIL}.')],
        sendNotifications: bool = True,
    ) -> dict[str, Any]:
        """Share a calendar: grant a role to a user, group, domain or everyone (needs owner).

        If the scope already has a rule, its role is replaced.
        """
        access = self.access(calendarId, "owner", "share it")
        value = (scope.value or "").strip().lower() if scope.type != "default" else ""
        rule_id = f"{scope.type}:{value}" if scope.type != "default" else "default"
        self._guard_owner(access, rule_id, role)
        stamp = self.store.tick()
        self.store.run(
            "INSERT OR REPLACE INTO acl VALUES (?, ?, ?, ?, ?, ?)",
            (
                access.id,
                rule_id,
                scope.type,
                value,
                role,
                make_etag(access.id, rule_id, role, stamp),
            ),
        )
        if scope.type == "user" and RANK[role] >= RANK["freeBusyReader"]:
            self._add_to_list(value, access.id)
        row = self.store.one(
            "SELECT * FROM acl WHERE calendar_id = ? AND rule_id = ?", (access.id, rule_id)
        )
        assert row is not None
        return self._rule(row)

    def _add_to_list(self, user: str, calendar_id: str) -> None:
        if self.store.one("SELECT 1 FROM users WHERE email = ?", (user,)) is None:
            return  # outside the directory: nothing to add to
        color = calendar_color_for(calendar_id)
        self.store.run(
            "INSERT OR IGNORE INTO calendar_list (user_email, calendar_id, color_id, "
            "background_color, etag) VALUES (?, ?, ?, ?, ?)",
            (
                user,
                calendar_id,
                color,
                CALENDAR_COLORS[color]["background"],
                make_etag(user, calendar_id),
            ),
        )

    def _same_scope(self, row: sqlite3.Row, scope: AclScope) -> None:
        """A rule's scope cannot change: `FORBIDDEN_OPERATION` unless `scope` is the rule's."""
        value = (scope.value or "").strip().lower()
        wanted = f"{scope.type}:{value}" if scope.type != "default" else "default"
        if wanted != row["rule_id"]:
            raise ApiError(
                "FORBIDDEN_OPERATION",
                f"A rule's scope cannot change ({row['rule_id']} → {wanted}).",
                field="scope",
                expected=self._rule(row)["scope"],
                got=scope.model_dump(exclude_none=True),
                hint="Insert a new rule with acl_insert and delete the old one.",
            )

    def _set_role(self, access: Access, row: sqlite3.Row, role: str) -> dict[str, Any]:
        self._guard_owner(access, row["rule_id"], role)
        self.store.run(
            "UPDATE acl SET role = ?, etag = ? WHERE calendar_id = ? AND rule_id = ?",
            (role, make_etag(access.id, row["rule_id"], role, self.store.tick()), access.id,
             row["rule_id"]),
        )  # fmt: skip
        if row["scope_type"] == "user" and RANK[role] >= RANK["freeBusyReader"]:
            self._add_to_list(row["scope_value"], access.id)
        return self._rule(self._find_rule(access, row["rule_id"]))

    @tool
    def acl_patch(
        self,
        calendarId: CalendarId,
        ruleId: RuleId,
        role: Annotated[AclRole | None, Field(description="The new role.")] = None,
        scope: Annotated[AclScope | None, Field(description="Must equal the rule's scope.")] = None,
        sendNotifications: bool = True,
    ) -> dict[str, Any]:
        """Change the role of a sharing rule (needs owner)."""
        access = self.access(calendarId, "owner", "change its sharing")
        row = self._find_rule(access, ruleId)
        if scope is not None:
            self._same_scope(row, scope)
        if role is None:
            return self._rule(row)
        return self._set_role(access, row, role)

    @tool
    def acl_update(
        self,
        calendarId: CalendarId,
        ruleId: RuleId,
        role: Annotated[AclRole, Field(description="The rule's role.")],
        scope: Annotated[
            AclScope, Field(description="The rule's scope (required in v3; cannot change).")
        ],
        sendNotifications: bool = True,
    ) -> dict[str, Any]:
        """Replace a sharing rule (needs owner): v3's PUT, with both role and scope required
        (the scope must be the rule's own). To change only the role, use acl_patch."""
        access = self.access(calendarId, "owner", "change its sharing")
        row = self._find_rule(access, ruleId)
        self._same_scope(row, scope)
        return self._set_role(access, row, role)

    @tool
    def acl_delete(self, calendarId: CalendarId, ruleId: RuleId) -> dict[str, Any]:
        """Remove a sharing rule (needs owner)."""
        access = self.access(calendarId, "owner", "change its sharing")
        row = self._find_rule(access, ruleId)
        self._guard_owner(access, row["rule_id"], None)
        self.store.run(
            "DELETE FROM acl WHERE calendar_id = ? AND rule_id = ?", (access.id, row["rule_id"])
        )
        self.store.tick()
        return {"calendarId": access.id, "ruleId": row["rule_id"], "deleted": True}
