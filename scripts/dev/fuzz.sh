#!/usr/bin/env bash
# scripts/dev/fuzz.sh [SECONDS] [TARGET...] (`make fuzz`): builds the libFuzzer targets of Fuzz/ with
# AddressSanitizer (docs/fuzzing.md), then for each target replays every committed input (Fuzz/FailCases/<Target>,
# Fuzz/Corpus/<Target>) and fuzzes it for SECONDS (default 20). `make test` replays the same inputs without a
# sanitizer build (Tests/FuzzReplayTests) and does not search. New inputs and crash artifacts go to var/fuzz/<Target>/, never into the
# committed corpus. Prints executions and crashes per target; exits non-zero on any crash.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd -P)
export PATH=/opt/swift/usr/bin:$PATH
export SWIFT_BACKTRACE=enable=no   # libFuzzer, not Swift's backtracer, reports a crash
# The Swift runtime and _RegexParser keep one-time allocations LeakSanitizer reports at exit; the
# targets look for crashes and broken invariants, not leaks.
export ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}

seconds=20
if [[ ${1:-} =~ ^[0-9]+$ ]]; then seconds=$1; shift; fi
# One executable per folder of Fuzz/Sources (FuzzReplayTests holds that list equal to FuzzHarness.FuzzTarget).
mapfile -t all < <(ls Fuzz/Sources)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
for target in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $target "* ]] || { echo "fuzz.sh: unknown target $target (targets: ${all[*]})" >&2; exit 2; }
done

# The largest input each target tries: a query string or a header block is short, a feed is not.
max_len() {
  case $1 in
    FuzzTime) echo 128 ;;
    FuzzRequestFraming) echo 1024 ;;
    FuzzReadOptions|FuzzToken|FuzzRequestHead) echo 2048 ;;
    FuzzCurbFeed|FuzzPlacesFile|FuzzAttestation|FuzzKeyAttestation) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

# SwiftPM knows a path dependency by its directory's name; a checkout named like the fuzz package
# itself ("fuzz") clashes with it.
if [ "$(basename "$root" | tr '[:upper:]' '[:lower:]')" = fuzz ]; then
  echo "fuzz.sh: this checkout's directory is named '$(basename "$root")', the same as the package Fuzz/;" \
       "SwiftPM cannot tell them apart. Clone or copy it under another name." >&2
  exit 2
fi

# swiftc keeps only the last -sanitize= it is given, and SwiftPM passes --sanitize values in no fixed
# order: without the combined flag last, a build gets either coverage or AddressSanitizer, not both.
# --disable-build-manifest-caching: a cached build plan still lists a source file moved or deleted since,
# and the build then fails on the missing input.
echo "== building the fuzz targets (release, libFuzzer + AddressSanitizer)"
swift build --package-path Fuzz -c release --sanitize=fuzzer --sanitize=address --disable-build-manifest-caching \
  -Xswiftc -parse-as-library -Xswiftc -sanitize=fuzzer,address 2>&1 \
  | grep -Ev '^(\[[0-9]+/[0-9]+\]|Building for|Compiling|Write|Emitting|Linking)|Cannot export local symbol'
# The build's own status: binaries left by an earlier build must not stand in for a failed one.
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "fuzz.sh: the fuzz build failed" >&2; exit 1; }
bin=$(swift build --package-path Fuzz -c release --show-bin-path)
for target in "${targets[@]}"; do
  [ -x "$bin/$target" ] || { echo "fuzz.sh: build failed ($bin/$target missing)" >&2; exit 1; }
done

# Crashes found but not yet fixed, excluded from the replay (one "<Target>/<file>" per line). Empty it
# as each fix lands.
known_unfixed=Fuzz/FailCases/known-unfixed.txt

failed=()
printf '\n%-16s %12s %8s  %s\n' target executions crashes result
for target in "${targets[@]}"; do
  work=$root/var/fuzz/$target
  rm -rf "$work/failcases" "$work/artifacts"
  mkdir -p "$work/new" "$work/failcases" "$work/artifacts"
  for file in Fuzz/FailCases/"$target"/*; do
    [ -f "$file" ] || continue
    case $(basename "$file") in README*|*.md) continue ;; esac
    if [ -f "$known_unfixed" ] && grep -qxF "$target/$(basename "$file")" <(sed 's/[[:space:]]*#.*//' "$known_unfixed"); then
      continue
    fi
    cp "$file" "$work/failcases/"
  done
  common=(-rss_limit_mb=2048 -timeout=10 -detect_leaks=0 -max_len="$(max_len "$target")")
  [ -f "Fuzz/Dictionaries/$target.dict" ] && common+=(-dict="Fuzz/Dictionaries/$target.dict")
  log=$work/log
  rm -f "$log" "$log.replay"
  result=ok
  # Every committed input once: a fixed crash stays fixed.
  if ! "$bin/$target" "${common[@]}" -runs=0 -artifact_prefix="$work/artifacts/" \
       "$work/failcases" "Fuzz/Corpus/$target" >"$log.replay" 2>&1; then
    result="replay crashed (see $log.replay)"
  fi
  executions=0
  if [ "$result" = ok ]; then
    "$bin/$target" "${common[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/" "$work/new" "Fuzz/Corpus/$target" "$work/failcases" >"$log" 2>&1 \
      || result="crashed (see $log)"
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  fi
  crashes=$(find "$work/artifacts" -type f | wc -l)
  [ "$result" != ok ] && [ "$crashes" -eq 0 ] && crashes=1
  printf '%-16s %12s %8s  %s\n' "$target" "${executions:-0}" "$crashes" "$result"
  if [ "$result" != ok ]; then
    failed+=("$target")
    for pattern in 'fuzz invariant broken|Swift runtime failure|Fatal error' 'ERROR: (AddressSanitizer|libFuzzer)'; do
      line=$(cat "$log.replay" "$log" 2>/dev/null | grep -m1 -E "$pattern")
      [ -n "$line" ] && { echo "    ${line#"${line%%[! ]*}"}"; break; }
    done
    find "$work/artifacts" -type f | sed 's/^/    artifact: /'
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]} (minimise with <target> -minimize_crash=1 -runs=10000 <artifact>," \
       "then commit the input to Fuzz/FailCases/<Target>/)"
  exit 1
fi
echo "fuzz: no crashes"
