#!/usr/bin/env python3
"""Mints access tokens for bench reporters, exactly as pricesvc's TokenIssuer shapes them.

    tokens.py SECRET_FILE RUN_ID COUNT_PER_SIDE OUT_DIR [MIXED_COUNT]

Writes, for the sides of the submission benchmark (http = wrk through pricesvc, pg = pgbench for row 1,
verified = pgbench for row 2, floor = pgbench as bench_floor, whose tokens are set but never verified),
and MIXED_COUNT (default 0) for the submissions of the mixed search workload (mixed = wrk, row 14):
  OUT_DIR/tokens-http.txt   one compact JWT per line (read by bench/wrk.lua)
  OUT_DIR/tokens-mixed.txt  the same for the mixed side
  OUT_DIR/reporters.tsv     side, idx, user uuid, session uuid, token  (COPY'd into bench.tokens; run.sh
                            creates the sessions, since the database accepts only tokens of live sessions)
  OUT_DIR/reader.txt        one token for the median readers (any authenticated user)
Claims: sub, role, aud "authenticated", iat, exp, iss "pricesvc", session_id, is_anonymous true.
HS256 with the secret file's bytes (one trailing newline dropped), like `pricesvc migrate` installs it.
"""
import base64
import hashlib
import hmac
import json
import os
import sys
import time
import uuid


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def main() -> None:
    secret_file, run_id, count, out_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    mixed_count = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    with open(secret_file, "rb") as handle:
        secret = handle.read()
    while secret and secret[-1:] in (b"\n", b"\r"):
        secret = secret[:-1]
    now = int(time.time())
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())

    def mint(sub: str, session: str) -> str:
        claims = {
            "sub": sub, "role": "authenticated", "aud": "authenticated", "iat": now, "exp": now + 3 * 3600,
            "iss": "pricesvc", "session_id": session, "is_anonymous": True,
        }
        signing_input = header + "." + b64url(json.dumps(claims, separators=(",", ":")).encode())
        signature = hmac.new(secret, signing_input.encode("ascii"), hashlib.sha256).digest()
        return signing_input + "." + b64url(signature)

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "reporters.tsv"), "w") as rows, \
         open(os.path.join(out_dir, "tokens-http.txt"), "w") as http, \
         open(os.path.join(out_dir, "tokens-mixed.txt"), "w") as mixed:
        token_files = {"http": http, "mixed": mixed}
        for side, side_count in (("http", count), ("pg", count), ("verified", count), ("floor", count),
                                 ("mixed", mixed_count)):
            for index in range(1, side_count + 1):
                sub, session = str(uuid.uuid4()), str(uuid.uuid4())
                token = mint(sub, session)
                rows.write(f"{run_id}\t{side}\t{index}\t{sub}\t{session}\t{token}\n")
                if side in token_files:
                    token_files[side].write(token + "\n")
        reader, reader_session = str(uuid.uuid4()), str(uuid.uuid4())
        reader_token = mint(reader, reader_session)
        rows.write(f"{run_id}\treader\t1\t{reader}\t{reader_session}\t{reader_token}\n")
    with open(os.path.join(out_dir, "reader.txt"), "w") as handle:
        handle.write(reader_token + "\n")


if __name__ == "__main__":
    main()
