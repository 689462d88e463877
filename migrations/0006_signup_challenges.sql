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

-- auth.spend_signup_challenge (auth.sql) records a challenge as spent; policies.sql keeps this table
-- closed to every client role and grants the function to the service's login alone.
