# Sourced by bench/run.sh and bench/instructions.sh (PGHOST and PGUSER set, PGBIN optional).
#
# load_reporters DATABASE TSV: bench.tokens becomes the reporters bench/tokens.py wrote to TSV, each a
# real user with a live session. The previous run's sessions go first (as `pricesvc prune` would retire
# them): otherwise auth.sessions grows by every run's reporters, and each verification's live-session
# lookup with it.
load_reporters() {
  "${PGBIN:+$PGBIN/}psql" -X -q -v ON_ERROR_STOP=1 -d "$1" >/dev/null <<SQL
delete from auth.sessions s using bench.tokens t where s.id = t.sid;
truncate bench.tokens;
\copy bench.tokens (run_id, side, idx, uid, sid, token) from '$2'
select bench.ensure_users(array(select uid from bench.tokens));
insert into auth.sessions (id, user_id) select sid, uid from bench.tokens on conflict do nothing;
SQL
}
