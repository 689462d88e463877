-- Anonymous identities: users, sessions, refresh tokens, per-IP token buckets and the JWT signing keys.
-- Nothing here is readable or writable by a client role; the service reaches it only through the
-- SECURITY DEFINER functions in policies.sql.

create schema auth;

-- HS256 secrets auth.jwt() verifies with: 'current' signs, 'previous' is still accepted during a rotation.
-- Written only by auth.install_signing_keys(), which `pricesvc migrate` calls.
create table auth.signing_keys (
    slot text primary key,
    secret bytea not null,
    installed_at timestamptz not null default now(),
    constraint signing_keys_slot_known check (slot in ('current', 'previous')),
    constraint signing_keys_secret_long_enough check (octet_length(secret) >= 32)
);

create table auth.users (
    id uuid primary key default extensions.gen_random_uuid(),
    user_metadata jsonb not null default '{}',
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint users_metadata_is_object check (jsonb_typeof(user_metadata) = 'object'),
    constraint users_metadata_bounded check (octet_length(user_metadata::text) <= 65536)
);

create table auth.sessions (
    id uuid primary key default extensions.gen_random_uuid(),
    user_id uuid not null references auth.users (id) on delete cascade,
    created_at timestamptz not null default now(),
    -- Last rotation of its refresh token: what prune measures idleness by.
    refreshed_at timestamptz not null default now(),
    revoked_at timestamptz
);
create index sessions_user_id_idx on auth.sessions (user_id);

-- Only the SHA-256 of a refresh token is stored: a copy of this table cannot mint sessions.
create table auth.refresh_tokens (
    id bigint generated always as identity primary key,
    token_hash bytea not null unique,
    session_id uuid not null references auth.sessions (id) on delete cascade,
    parent_id bigint references auth.refresh_tokens (id) on delete set null,
    created_at timestamptz not null default now(),
    -- Set when the token was exchanged for a new one; presenting it again is a reuse.
    rotated_at timestamptz,
    -- Set when its session was revoked (sign-out or detected reuse).
    revoked_at timestamptz,
    constraint refresh_tokens_hash_is_sha256 check (octet_length(token_hash) = 32)
);
create index refresh_tokens_session_id_idx on auth.refresh_tokens (session_id);
create index refresh_tokens_parent_id_idx on auth.refresh_tokens (parent_id);

-- Token buckets for per-IP limits (sign-up, refresh), shared by every pricesvc instance.
-- ip_key is the service's HMAC of the client address, never the address itself.
create table auth.rate_limit_buckets (
    bucket text not null,
    ip_key bytea not null,
    tokens double precision not null,
    updated_at timestamptz not null,
    primary key (bucket, ip_key),
    constraint rate_limit_buckets_bucket_known check (bucket in ('sign_up', 'refresh'))
);
