-- Key rotation that keeps apps working (issue 24). Rotating the JWT secret meant replacing both keys at
-- once with `pricesvc migrate` (a superuser) and restarting every instance with the new secret: a token
-- signed by a restarted instance was refused by one not yet restarted, and the anon key, signed with
-- the secret, changed under every installed app.
--
-- Now the signing keys rotate in three steps (auth.sql: add, promote, retire; `pricesvc keys`), and a
-- third slot holds the key that was added but does not sign yet. `shared`: whether the instances holding
-- another key of the set may learn this one (auth.signing_key_ring()); false for a key added after a
-- leak, which the leaked key must not reveal.
alter table auth.signing_keys drop constraint signing_keys_slot_known;
alter table auth.signing_keys add constraint signing_keys_slot_known check (slot in ('next', 'current', 'previous'));
alter table auth.signing_keys add column shared boolean not null default true;

-- The replacement of the whole set, which the three steps make unsafe (it dropped an added key).
drop function if exists auth.install_signing_keys(bytea, bytea);

-- Publishable API keys (Supabase's sb_publishable_… keys): what an app sends as `apikey`, independent of
-- the signing keys, so rotating those never breaks an installed app. Opaque random text; only its
-- SHA-256 is stored. `display` is the key's first characters, enough for an operator to tell keys apart.
create table auth.publishable_keys (
    id uuid primary key default extensions.gen_random_uuid(),
    name text not null,
    key_hash bytea not null unique,
    display text not null,
    created_at timestamptz not null default now(),
    revoked_at timestamptz,
    constraint publishable_keys_hash_is_sha256 check (octet_length(key_hash) = 32),
    constraint publishable_keys_name_bounded check (octet_length(name) between 1 and 200)
);
