"""Second security review, A25: the redaction gaps of ``report --bundle`` (a quoted JSON password, ``--password X``,
a netrc line, a PEM private key, docker's ``"auth"``, the host name in upper case), each closed, and what must stay
(requirements whose names contain a secret word) left alone."""

from __future__ import annotations

import pytest

from wizard.evidence import Redactor

pytestmark = pytest.mark.unit

SECRETS = ("hunter2", "hunter3", "Pa55w0rdNetrc", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "YWxpY2U6c2VjcmV0cGFzcw==",
           "GPU01", "LAB.EXAMPLE")


def test_the_reviews_unredacted_forms_are_redacted() -> None:
    text = ('{"password": "hunter2"}\n'
            "tool --password hunter3 --verbose\n"
            "machine pypi.example login alice password Pa55w0rdNetrc\n"
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END RSA PRIVATE KEY-----\n"
            '{"auths": {"r.example": {"auth":"YWxpY2U6c2VjcmV0cGFzcw=="}}}\n'
            "GPU01.LAB.EXAMPLE.COM rebooted\n")
    out = Redactor(users=("alice",), hostname="gpu01.lab.example.com")(text)
    assert not [s for s in SECRETS if s in out], out
    assert "-----BEGIN RSA PRIVATE KEY-----\n***\n-----END RSA PRIVATE KEY-----" in out
    assert "host rebooted" in out


def test_requirements_and_prose_stay() -> None:
    text = "torch==2.5.1\ntokenizers==0.19.1\npassword-strength==0.0.3\nthe --token-file option\n"
    assert Redactor(users=(), hostname=None)(text) == text
