-- Attested sign-up (issue 20, App Attest). The service verifies an attestation object (Swift, AppAttest
-- module) and signs the identity up through auth.sign_up_attested (auth.sql), which records the key here
-- in the same transaction as the identity and the spent challenge.

-- One row per App Attest key that ever made an identity: a key makes one identity, once. The row outlives
-- the identity (`pricesvc prune` deletes users; user_id becomes null), so a pruned identity's key cannot
-- make a new one. key_id_hash is SHA-256 of the key id; the public key and counter are kept for later
-- assertions, the receipt for an operator who asks Apple for the key's risk metric.
create table auth.attested_keys (
    key_id_hash bytea primary key,
    user_id uuid unique references auth.users (id) on delete set null,
    app_id text not null,
    environment text not null,
    public_key bytea not null,
    counter bigint not null default 0,
    receipt bytea not null,
    attested_at timestamptz not null default now(),
    constraint attested_keys_key_id_hash_is_sha256 check (octet_length(key_id_hash) = 32),
    constraint attested_keys_environment check (environment in ('production', 'development')),
    constraint attested_keys_public_key_is_p256 check (octet_length(public_key) = 65),
    constraint attested_keys_receipt_size check (octet_length(receipt) <= 16384),
    constraint attested_keys_app_id_size check (octet_length(app_id) between 1 and 255)
);

-- Whether the report's reporter was an attested identity when the report was admitted (reports.sql sets
-- it; no client role may write it). Under the `attested` threshold mode (settings.sql,
-- private.threshold_counts()), a report of an unattested reporter never matures: its reporter_matures_at
-- is 'infinity', so the median store and every median function leave it out without knowing of modes.
alter table public.price_reports add column reporter_attested boolean not null default false;

-- The threshold mode the stored reports' reporter_matures_at were computed under. When settings.sql
-- changes the mode, private.threshold_reconcile() (medians.sql) recomputes them and records the new one.
create table private.threshold_state (
    singleton boolean primary key default true check (singleton),
    counts text not null check (counts in ('mature', 'attested'))
);
insert into private.threshold_state (counts) values ('mature');

-- auth.get_user and auth.refresh_session now also say whether the identity is attested (auth.sql
-- recreates them with that column; policies.sql grants them again).
drop function if exists auth.get_user(uuid, uuid);
drop function if exists auth.refresh_session(bytea, bytea, bytea, integer, integer, integer);
