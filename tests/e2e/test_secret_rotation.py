"""Rotating the JWT secret: sign with the new one, still accept the previous one (in pricesvc and in the
database, which verifies every token itself). Re-keys the shared database, so it runs last and restores."""

import base64
import os

import pytest

from helpers import jwt_claims, report, signature_valid

pytestmark = pytest.mark.disruptive


def test_a_server_given_the_previous_secret_accepts_tokens_signed_with_it_while_signing_with_the_new_one(
        migrated, start_server, server, anon_key, db):
    old_secret = migrated.secret
    new_secret = base64.b64encode(os.urandom(48)).decode()
    old_api = server.api(anon_key)
    old_session = old_api.new_session()

    migrated.migrate(secret=new_secret, previous_secret=old_secret)
    try:
        new_anon_key = migrated.run("keys", PRICESVC_JWT_SECRET=new_secret).stdout.strip()
        assert new_anon_key != anon_key and signature_valid(new_anon_key, new_secret)
        rotated = start_server(JWT_SECRET=new_secret, JWT_PREVIOUS_SECRET=old_secret,
                               RATE_LIMIT_PER_MINUTE=100000, SIGNUP_BURST=100000, SIGNUPS_PER_HOUR=100000)
        api = rotated.api(new_anon_key)

        # A token signed with the previous secret still works, in pricesvc and in the database.
        row = report()
        assert api.submit(row, old_session["access_token"]).status_code == 201
        assert db.count_reports([row["client_report_id"]]) == 1
        user = api.get("/auth/v1/user", token=old_session["access_token"])
        assert user.status_code == 200 and user.json()["id"] == old_session["user"]["id"]
        # So does the previous anon key, and refresh tokens are not tied to a secret.
        assert api.get("/rest/v1/", apikey=anon_key).status_code == 200
        refreshed = api.refresh(old_session["refresh_token"])
        assert refreshed.status_code == 200, refreshed.text

        # New tokens are signed with the new secret only.
        new_session = api.new_session()
        assert signature_valid(new_session["access_token"], new_secret)
        assert not signature_valid(new_session["access_token"], old_secret)
        assert signature_valid(refreshed.json()["access_token"], new_secret)
        assert api.submit(report(), new_session["access_token"]).status_code == 201
        # A server still on the old secret alone does not accept them.
        assert old_api.submit(report(), new_session["access_token"]).status_code == 401
        # ... while its own tokens keep working (the database knows the old key as the previous one).
        assert old_api.submit(report(), old_api.new_session()["access_token"]).status_code == 201
    finally:
        migrated.migrate()  # back to the test secret alone

    # The database now rejects the new secret's tokens on its own, even from a server that would accept them.
    response = api.submit(report(), new_session["access_token"])
    assert response.status_code == 401, (response.status_code, response.text)
    assert jwt_claims(new_session["access_token"])["role"] == "authenticated"
    assert old_api.submit(report(), old_api.new_session()["access_token"]).status_code == 201
