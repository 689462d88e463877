-- Attested sign-up on Android (issue 35, Key Attestation). The service verifies the certificate chain
-- (Swift, AndroidAttestation module) and signs the identity up through auth.sign_up_android_attested
-- (auth.sql), which records the key here in the same transaction as the identity and the spent challenge.

-- One row per Android Keystore key that ever made an identity: a key makes one identity, once. As for App
-- Attest's auth.attested_keys, the row outlives the identity (user_id becomes null when `pricesvc prune`
-- deletes it). key_id_hash is SHA-256 of the leaf certificate's subjectPublicKeyInfo; what the attestation
-- said of the device is kept for an operator's later questions (how many StrongBox keys, which apps).
create table auth.android_attested_keys (
    key_id_hash bytea primary key,
    user_id uuid unique references auth.users (id) on delete set null,
    package_name text not null,
    security_level text not null,
    verified_boot_state text not null,
    device_locked boolean not null,
    attested_at timestamptz not null default now(),
    constraint android_attested_keys_key_id_hash_is_sha256 check (octet_length(key_id_hash) = 32),
    constraint android_attested_keys_package_name_size check (octet_length(package_name) between 1 and 255),
    constraint android_attested_keys_security_level check (security_level in ('TRUSTED_ENVIRONMENT', 'STRONG_BOX')),
    constraint android_attested_keys_verified_boot_state
        check (verified_boot_state in ('VERIFIED', 'SELF_SIGNED', 'UNVERIFIED', 'FAILED'))
);

-- auth.get_user and auth.refresh_session now also name the identity's attestation provider (auth.sql
-- recreates them with an `attestation` column after `attested`; policies.sql grants them again).
drop function if exists auth.get_user(uuid, uuid);
drop function if exists auth.refresh_session(bytea, bytea, bytea, integer, integer, integer);
