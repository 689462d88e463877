-- Spent sign-up challenges (PRICESVC_SIGNUP_CHALLENGE): the proof-of-work challenges are issued without
-- state, so "each solution is accepted once" needs one list every pricesvc instance shares. Only the
-- SHA-256 of a challenge is kept, and only until shortly after it expires: past its expiry the service
-- refuses the challenge by itself.

create table auth.spent_signup_challenges (
    challenge_hash bytea primary key,
    expires_at timestamptz not null,
    constraint spent_signup_challenges_hash_is_sha256 check (octet_length(challenge_hash) = 32)
);
create index spent_signup_challenges_expires_at_idx on auth.spent_signup_challenges (expires_at);

-- Records a challenge as spent, in the sign-up's own transaction: a refused sign-up spends nothing, and
-- of two sign-ups racing with one solution the second waits for the first and then gets PA010.
-- Each call also removes a few rows expired for over ten minutes (more than the service's tolerated
-- clock skew), so the table stays about one challenge lifetime of sign-ups without a separate job;
-- SKIP LOCKED keeps concurrent sign-ups from queueing on each other's clean-up.
create function auth.spend_signup_challenge(challenge_hash pg_catalog.bytea, expires_at pg_catalog.timestamptz)
    returns void
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    if spend_signup_challenge.challenge_hash is null or spend_signup_challenge.expires_at is null then
        raise exception using errcode = '22004', message = 'challenge_hash and expires_at are required';
    end if;

    delete from auth.spent_signup_challenges s
    where s.challenge_hash = any (array(
        select x.challenge_hash from auth.spent_signup_challenges x
        where x.expires_at < pg_catalog.now() - pg_catalog.make_interval(mins => 10)
        order by x.expires_at
        limit 16
        for update skip locked));

    insert into auth.spent_signup_challenges (challenge_hash, expires_at)
    values (spend_signup_challenge.challenge_hash, spend_signup_challenge.expires_at)
    on conflict on constraint spent_signup_challenges_pkey do nothing;
    if not found then
        raise exception using errcode = 'PA010', message = 'sign-up challenge already used';
    end if;
end
$$;

revoke all on table auth.spent_signup_challenges from public, anon, authenticated, price_analyst, authenticator;
revoke all on function auth.spend_signup_challenge(pg_catalog.bytea, pg_catalog.timestamptz) from public;
-- Only the service's login spends challenges, as part of POST /auth/v1/signup.
grant execute on function auth.spend_signup_challenge(pg_catalog.bytea, pg_catalog.timestamptz) to authenticator;
