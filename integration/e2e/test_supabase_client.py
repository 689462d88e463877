"""A real third-party client: the unmodified supabase-py package from PyPI, pointed at pricesvc."""

import uuid

import pytest
from supabase import create_client


@pytest.fixture
def supabase_clients(server, anon_key):
    clients = []

    def make():
        client = create_client(server.url, anon_key)
        clients.append(client)
        return client

    yield make
    for client in clients:
        try:
            client.auth.sign_out()
        except Exception:  # already signed out, or the test failed first
            pass


def test_supabase_py_signs_in_anonymously_submits_reports_and_sees_the_median_appear_at_the_third_reporter(
        supabase_clients, db):
    loc = f"e2e:supabase:{uuid.uuid4().hex[:10]}"
    other = f"e2e:supabase:{uuid.uuid4().hex[:10]}"
    clients = [supabase_clients() for _ in range(3)]
    seen = []
    for index, (client, cents) in enumerate(zip(clients, (400, 500, 600))):
        response = client.auth.sign_in_anonymously()
        assert response.session and response.session.access_token
        assert response.user.is_anonymous is True and response.user.aud == "authenticated"
        db.age_users([response.user.id])  # only identities a day old count toward medians
        crid = str(uuid.uuid4())
        client.table("price_reports").insert(
            {"location_id": loc, "rate_kind": "hourly", "price_cents": cents, "client_report_id": crid},
            returning="minimal").execute()
        assert db.psql(f"select reporter_id from public.price_reports where client_report_id = '{crid}'") \
            == response.user.id
        result = client.rpc("price_medians", {"location_ids": [loc, other]}).execute()
        seen.append(result.data)
        if index < 2:
            assert result.data == [], f"a median was visible with {index + 1} reporter(s)"
    assert len(seen[2]) == 1
    median = seen[2][0]
    assert median["location_id"] == loc and median["median_cents"] == 500 and median["reporters"] == 3

    # A batch insert (a list becomes a JSON array) works the same way.
    clients[0].table("price_reports").insert(
        [{"location_id": other, "rate_kind": "daily", "price_cents": 1500},
         {"location_id": other, "rate_kind": "daily", "price_cents": 1600}], returning="minimal").execute()


def test_supabase_py_refreshes_the_session_and_signs_out(supabase_clients):
    client = supabase_clients()
    signed_in = client.auth.sign_in_anonymously()
    first = signed_in.session
    refreshed = client.auth.refresh_session()
    assert refreshed.session.refresh_token != first.refresh_token
    assert refreshed.user.id == first.user.id
    # The refreshed access token is what the client now sends with its REST calls.
    client.table("price_reports").insert(
        {"location_id": f"e2e:supabase:{uuid.uuid4().hex[:8]}", "rate_kind": "hourly", "price_cents": 250},
        returning="minimal").execute()
    assert client.auth.get_user().user.id == first.user.id
    client.auth.sign_out()
    assert client.auth.get_session() is None
    # The revoked refresh token cannot be used again by anyone.
    from supabase_auth.errors import AuthApiError
    other = supabase_clients()
    with pytest.raises(AuthApiError):
        other.auth.refresh_session(refreshed.session.refresh_token)


def test_supabase_py_signs_out_cleanly_when_its_session_was_already_revoked(supabase_clients, api):
    # Logout with a revoked session is 403 session_not_found; the SDK counts that as signed out.
    client = supabase_clients()
    session = client.auth.sign_in_anonymously().session
    assert api.logout(session.access_token, scope="global").status_code == 204
    client.auth.sign_out()
    assert client.auth.get_session() is None


def test_supabase_py_sees_postgrest_errors_for_bad_rows(supabase_clients):
    from postgrest.exceptions import APIError
    client = supabase_clients()
    client.auth.sign_in_anonymously()
    with pytest.raises(APIError) as error:
        client.table("price_reports").insert({"location_id": "x", "rate_kind": "hourly", "price_cents": 1,
                                              "reporter_id": str(uuid.uuid4())}, returning="minimal").execute()
    assert error.value.code == "PGRST204"
