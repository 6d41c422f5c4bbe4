"""/etc/os-release (os-release(5)): shell-style assignments with quotes, escapes and comments."""

from __future__ import annotations

from wizard.parsers._text import lines, never_raises
from wizard.record import record


def assignment(line: str) -> tuple[str, str] | None:
    """``NAME=value`` (after an optional ``export``) in a stripped line: (NAME, value as written), else None. String
    tests, not a pattern: every detect reads /etc/os-release, and compiling one cost more than the reading."""
    rest = line
    if line.startswith("export") and line[6:7].isspace():
        rest = line[6:].lstrip()
    name, eq, value = rest.partition("=")
    return (name, value) if eq and name.isascii() and name.isidentifier() else None


def unquote(value: str) -> str:
    """Value of an os-release assignment: quotes removed, backslash escapes resolved, unquoted
    trailing comments dropped. Unbalanced quotes keep the rest of the line."""
    out: list[str] = []
    quote = ""
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"' and i + 1 < n and value[i + 1] in '$"\\`\n':
                i += 1
                out.append(value[i])
            else:
                out.append(c)
        elif c in "\"'":
            quote = c
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(value[i])
        elif c == "#" and (not out or out[-1].isspace()):
            break
        elif c.isspace():
            # unquoted whitespace ends the value (os-release(5) requires quoting it)
            rest = value[i:].strip()
            if not rest or rest.startswith("#"):
                break
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out).strip() if not quote else "".join(out)


@record
class OsRelease:
    id: str | None = None  # "ubuntu"
    version_id: str | None = None  # "22.04"
    version_codename: str | None = None  # VERSION_CODENAME, else UBUNTU_CODENAME
    id_like: tuple[str, ...] = ()
    pretty_name: str | None = None
    name: str | None = None
    version: str | None = None
    fields: tuple[tuple[str, str], ...] = ()  # every assignment, in order (last one wins in get)

    def get(self, key: str) -> str | None:
        value = None
        for k, v in self.fields:
            if k == key:
                value = v
        return value


@never_raises(OsRelease)
def parse_os_release(text: object) -> OsRelease:
    fields: list[tuple[str, str]] = []
    for _no, line in lines(text):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        found = assignment(s)
        if found:
            fields.append((found[0], unquote(found[1])))
    d: dict[str, str] = {}
    for k, v in fields:
        d[k] = v

    def val(key: str) -> str | None:
        v = d.get(key)
        return v if v else None

    os_id = val("ID")
    return OsRelease(
        id=os_id.lower() if os_id else None,
        version_id=val("VERSION_ID"),
        version_codename=val("VERSION_CODENAME") or val("UBUNTU_CODENAME"),
        id_like=tuple(p.lower() for p in (val("ID_LIKE") or "").split()),
        pretty_name=val("PRETTY_NAME"),
        name=val("NAME"),
        version=val("VERSION"),
        fields=tuple(fields),
    )
