#!/usr/bin/env bash
# Builds libjunocpu.so (Juno's native CPU kernels) into the directory given as $1, with the machine's C compiler.
# Called by gpu-ffi's Maven build (generate-resources). Never fails the build: without a compiler, on another
# platform, or when compiling fails, it prints one line and leaves no library, and Juno runs its Java backend.
# Environment: CC (default gcc), JUNO_NATIVE=0 (skip), JUNO_NATIVE_SANITIZE=address,undefined (a sanitizer build).
# With a second argument, a C test program: it is compiled and linked with the kernels into OUTDIR/juno-cpu-test
# instead of the library (NativeKernelsSanitizerTest does this with the sanitizers on); then a failure exits 1.
set -u
out="${1:?usage: build-native.sh OUTDIR [TEST.c]}"
harness="${2:-}"
src="$(cd "$(dirname "$0")" && pwd)"
cc="${CC:-gcc}"
say() { echo "[juno-native] $*"; }
rm -f "$out/libjunocpu.so"
if [ "${JUNO_NATIVE:-1}" = "0" ]; then say "skipped (JUNO_NATIVE=0): Juno will run its Java backend"; exit 0; fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) say "no native kernels for $(uname -s)-$(uname -m) yet: Juno will run its Java backend"; exit 0 ;;
esac
if ! command -v "$cc" >/dev/null 2>&1; then say "no C compiler ($cc): Juno will run its Java backend"; exit 0; fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
common=(-O3 -std=c11 -fPIC -ffp-contract=off -fno-fast-math -fno-strict-aliasing -Wall -Wextra -Wno-unused-function -I"$src")
link=()
if [ -n "${JUNO_NATIVE_SANITIZE:-}" ]; then
  common=("${common[@]/-O3/-O1}")
  common+=(-fsanitize="$JUNO_NATIVE_SANITIZE" -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  link+=(-fsanitize="$JUNO_NATIVE_SANITIZE")
fi
log="$tmp/cc.log"
build() { # name flags...
  local name="$1"; shift
  "$cc" "${common[@]}" "$@" -DJUNO_ISA="$name" -c "$src/juno_cpu.c" -o "$tmp/juno_cpu_$name.o" >>"$log" 2>&1
}
ok=1
"$cc" "${common[@]}" -c "$src/juno_dispatch.c" -o "$tmp/juno_dispatch.o" >>"$log" 2>&1 || ok=0
# the AVX2 variant is required; a compiler too old for the VNNI flags (gcc < 11 has no -mavxvnni) only loses those
[ $ok = 1 ] && { build avx2 -mavx2 -mfma -mf16c || ok=0; }
if [ $ok = 1 ] && ! build avxvnni -mavx2 -mfma -mf16c -mavxvnni; then
  say "this compiler cannot build the AVX-VNNI variant; the others are built"; rm -f "$tmp/juno_cpu_avxvnni.o"
fi
if [ $ok = 1 ] && ! build avx512vnni -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni; then
  say "this compiler cannot build the AVX-512 VNNI variant; the others are built"; rm -f "$tmp/juno_cpu_avx512vnni.o"
fi
# AMX (Q4_K tiles) is its own file on top of the AVX-512 flags: a compiler without -mamx-int8 only loses it
if [ $ok = 1 ] && [ -f "$tmp/juno_cpu_avx512vnni.o" ] && ! "$cc" "${common[@]}" -mavx2 -mfma -mf16c -mavx512f -mavx512bw \
    -mavx512vl -mavx512dq -mavx512vnni -mamx-tile -mamx-int8 -c "$src/juno_amx.c" -o "$tmp/juno_amx.o" >>"$log" 2>&1; then
  say "this compiler cannot build the AMX kernels; the others are built"; rm -f "$tmp/juno_amx.o"
fi
mkdir -p "$out"
if [ -n "$harness" ]; then
  [ $ok = 1 ] && { "$cc" "${common[@]}" -mavx2 -mf16c "$harness" "$tmp"/*.o "${link[@]}" -o "$out/juno-cpu-test" -lm >>"$log" 2>&1 || ok=0; }
  if [ $ok = 1 ]; then say "built $out/juno-cpu-test"; exit 0; fi
  say "building the test program failed:"; sed 's/^/[juno-native]   /' "$log"; exit 1
fi
[ $ok = 1 ] && { "$cc" -shared "${link[@]}" -o "$out/libjunocpu.so" "$tmp"/*.o -lm >>"$log" 2>&1 || ok=0; }
if [ $ok = 1 ]; then
  say "built $out/libjunocpu.so ($("$cc" --version | head -1))"
else
  say "compiling the native kernels failed: Juno will run its Java backend. Compiler output:"
  sed 's/^/[juno-native]   /' "$log"
  rm -f "$out/libjunocpu.so"
fi
exit 0
