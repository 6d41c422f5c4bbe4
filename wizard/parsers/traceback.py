"""Error texts (tracebacks, runtime messages) read for their exception: its type and message, the text's lines with
blanks collapsed and prompts dropped. Signatures are not matched against this text (it loses lines, so evidence
would point at the wrong one): the one normaliser for matching is parsers/match_text.py."""

from __future__ import annotations

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises, prompt_command
from wizard.record import record

_WS_RE = lazy_re.compile(r"[ \t]+")
_EXC_RE = lazy_re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit)|[\w.]*Error)\s*:\s*(.*)$")
_TB_START = "Traceback (most recent call last):"


@record
class ErrorText:
    text: str  # ANSI/CR stripped, runs of blanks collapsed, blank lines and prompts dropped
    exception: str | None = None  # last "SomethingError: message" line's type
    message: str | None = None  # its message
    has_traceback: bool = False


@never_raises(lambda: ErrorText(""))
def parse_error_text(text: object) -> ErrorText:
    kept: list[str] = []
    exception = message = None
    has_tb = False
    for _no, line in lines(text):
        s = _WS_RE.sub(" ", line).strip()
        if not s or (prompt_command(s) is not None and not s.startswith(">>>")):
            continue
        if s == _TB_START:
            has_tb = True
        m = _EXC_RE.match(s)
        if m:
            exception, message = m.group(1), m.group(2) or None
        kept.append(s)
    return ErrorText("\n".join(kept), exception, message, has_tb)

