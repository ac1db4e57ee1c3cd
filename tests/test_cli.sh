#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The simdpath program: exit codes and messages. $1 is the binary;
# SP_WRAPPER (e.g. "qemu-x86_64 -cpu Haswell") runs it on another CPU and
# SP_EXPECT_AUTO names the variant auto must pick there. A SIMDPATH_IMPL
# from the caller is checked on its own; the other checks run without it.
# $2 is the man page, which must name every option and command of the
# help texts.
set -u
exe="$1"
# Absolute, for the checks that run it in another directory.
case $exe in /*) ;; *) exe=$PWD/$exe ;; esac
man="${2:-}"
forced=${SIMDPATH_IMPL:-}
unset SIMDPATH_IMPL
run() { ${SP_WRAPPER:-} "$exe" "$@"; }
out=$(mktemp); err=$(mktemp); pcap=$(mktemp)
trap 'rm -f "$out" "$err" "$pcap"' EXIT
passed=0; failed=0

# expect CODE DESCRIPTION -- ARGS...: runs simdpath, checks the exit code.
expect() {
    code=$1; what=$2; shift 3
    run "$@" >"$out" 2>"$err"
    got=$?
    if [ "$got" -eq "$code" ]; then
        passed=$((passed + 1))
        return 0
    fi
    echo "FAIL: $what: exit $got, want $code (simdpath $*)"
    sed 's/^/  stderr: /' "$err" | head -5
    failed=$((failed + 1))
    return 1
}

# has FILE TEXT DESCRIPTION: checks that the last run printed TEXT.
has() {
    if grep -qF -- "$2" "$1"; then
        passed=$((passed + 1))
    else
        echo "FAIL: $3: '$2' not in output"
        sed 's/^/  | /' "$1" | head -20
        failed=$((failed + 1))
    fi
}

expect 0 "help" -- --help && has "$out" "Usage: simdpath" "help text"
has "$out" "SIMDPATH_IMPL" "help names the environment variable"
expect 0 "help command" -- help
expect 0 "version" -- --version && has "$out" "simdpath " "version"
expect 2 "no command" -- && has "$err" "missing command" "no command"
expect 2 "unknown command" -- frobnicate && has "$err" "unknown command" \
    "unknown command"
expect 2 "unknown option" -- --frob impls
expect 2 "bad width" -- --max-simd 100 impls && has "$err" \
    "invalid width '100'" "bad width"

expect 0 "impls" -- impls
has "$out" "Kernels" "impls table"
has "$out" "(auto)" "impls shows auto choices"
if [ -n "${SP_EXPECT_AUTO:-}" ]; then
    for k in mfex hash emc classifier batch_copy ipv4_rewrite key_match; do
        line=$(grep "^  $k " "$out")
        case "$line" in
        *"*"*"(auto)") passed=$((passed + 1)) ;;
        *) echo "FAIL: no active variant for $k: $line"
           failed=$((failed + 1)) ;;
        esac
    done
    # The best variant auto picked is marked in use by a kernel with its
    # own code for it, or named as the one auto falls back from.
    grep -E "^  (mfex|hash|emc|classifier|batch_copy|ipv4_rewrite|key_match) " \
        "$out" | grep -q "$SP_EXPECT_AUTO (auto)"
    if [ $? -eq 0 ]; then passed=$((passed + 1)); else
        echo "FAIL: auto did not pick $SP_EXPECT_AUTO"; cat "$out"
        failed=$((failed + 1)); fi
fi

# Every compiled variant the CPU cannot run is refused by name.
for v in $(awk '/not supported/ { print $1 }' "$out"); do
    expect 2 "unsupported $v" -- --impl "$v" impls &&
        has "$err" "variant '$v' is not supported by this CPU" \
            "unsupported $v" && has "$err" "valid here: scalar" \
            "unsupported $v lists the valid ones"
done
for v in $(awk '/^  [a-z0-9]+ +[0-9]+ bits  supported/ { print $1 }' \
                "$out"); do
    expect 0 "forced $v" -- --impl "$v" impls &&
        has "$out" "(forced)" "forced $v is shown"
done

SIMDPATH_IMPL=bogus expect 2 "bad environment" -- impls &&
    has "$err" "SIMDPATH_IMPL: unknown variant 'bogus'" "bad environment" &&
    has "$err" "valid here: scalar" "environment error lists valid ones"
SIMDPATH_IMPL=hash=scalar expect 0 "environment" -- impls &&
    has "$out" "scalar (forced)" "environment applies"
SIMDPATH_IMPL=hash=scalar expect 0 "option after environment" -- \
    --impl hash=auto impls && grep "^  hash " "$out" | grep -q "(auto)" &&
    passed=$((passed + 1))
expect 2 "unknown kernel" -- --impl frob=scalar impls &&
    has "$err" "unknown kernel 'frob'; kernels: mfex, hash, emc, \
classifier, batch_copy, ipv4_rewrite, key_match" "unknown kernel"
expect 2 "empty item" -- --impl scalar,,auto impls
expect 0 "autovalidate" -- --impl autovalidate impls &&
    has "$out" "autovalidate" "autovalidate shown"
expect 0 "max-simd 128" -- --max-simd 128 impls

expect 1 "ctl without a running simdpath" -- ctl --socket /nonexistent/ctl \
    counters-show && has "$err" "cannot connect to /nonexistent/ctl" \
    "ctl names the socket it tried"
expect 2 "ctl without a command" -- ctl
expect 2 "ctl with an empty socket path" -- ctl --socket "" counters-show &&
    has "$err" "the control socket path is empty" "ctl empty socket path"
expect 2 "ctl argument with a newline" -- ctl --socket /nonexistent/ctl \
    flow-add "$(printf 'ip,actions=drop\nstop')" &&
    has "$err" "argument 2 holds control byte 0x0a" "ctl newline argument"
SIMDPATH_IMPL=bogus expect 1 "ctl ignores SIMDPATH_IMPL" -- ctl --socket \
    /nonexistent/ctl stop && has "$err" "cannot connect to /nonexistent/ctl" \
    "ctl under a bad SIMDPATH_IMPL"
if run run --help >"$out" 2>"$err"; then
    passed=$((passed + 1))
    has "$out" "--flows FILE" "run --help lists its options"
    # A bad control socket path stops run before DPDK starts (exit 2; a
    # net_bogus0 port would fail in EAL with 1).
    ctldir=$(mktemp -d)
    printf 'actions=output:1\n' >"$ctldir/flows"
    cp "$ctldir/flows" "$ctldir/flows.orig"
    mkdir "$ctldir/open" && chmod 1777 "$ctldir/open"
    bad_ctl() {
        expect 2 "$1" -- run --port net_bogus0 --flows "$ctldir/flows" \
            --ctl "$2" && has "$err" "$3" "$1"
    }
    # The configuration file: settings as options, before the command
    # line's; every line checked, errors at FILE:LINE:COL, exit 2 before
    # DPDK starts (a net_bogus0 port would fail in EAL with 1).
    conf="$ctldir/conf"
    bad_conf() {
        what=$1 want=$2
        shift 2
        expect 2 "config: $what" -- run --config "$conf" "$@" &&
            has "$err" "$want" "config: $what"
    }
    # LF, CRLF and lone CR line ends, comments, blanks, '=', dashes; the
    # settings reach the options: the file's control socket is refused.
    printf '# simdpath\r\nport net_bogus0 # a comment\r\n\n' >"$conf"
    printf '\t flows = %s\rctl=%s\n--duration 5\n' "$ctldir/flows" \
        "$ctldir/none/ctl" >>"$conf"
    bad_conf "good file" \
        "control socket directory $ctldir/none: No such file or directory"
    # The command line applies after the file.
    bad_conf "command line wins" \
        "control socket directory $ctldir/none2: No such" \
        --ctl "$ctldir/none2/ctl"
    # A repeated option adds to the file's: the file's port is port 1.
    bad_conf "ports add up" "port 2 (net_bogus0) is port 1's device" \
        --port net_bogus0
    printf 'ctl %s\n\n  frob 1\n' "$ctldir/none/ctl" >"$conf"
    bad_conf "unknown option" "$conf:3:3: unknown option 'frob'"
    printf 'por net_bogus0\n' >"$conf"
    bad_conf "no abbreviations" "$conf:1:1: unknown option 'por'"
    printf 'port\n' >"$conf"
    bad_conf "missing value" "$conf:1:5: 'port' needs a value"
    printf 'port = \n' >"$conf"
    bad_conf "missing value after =" "$conf:1:8: 'port' needs a value"
    printf '= net_null0\n' >"$conf"
    bad_conf "no option name" "$conf:1:1: an option name is missing"
    printf 'port net_null0 net_null1\n' >"$conf"
    bad_conf "two values" "$conf:1:16: one value per option"
    printf 'config %s\n' "$conf" >"$conf"
    bad_conf "config in the file" \
        "$conf:1:1: 'config' cannot be set in a configuration file"
    printf 'help x\n' >"$conf"
    bad_conf "help in the file" "$conf:1:1: 'help' cannot be set"
    printf 'port net_null0\npmd-threads\t2x\n' >"$conf"
    bad_conf "bad value" "simdpath: $conf:2:13: --pmd-threads: invalid value"
    printf 'log-level loud\n' >"$conf"
    bad_conf "bad log level" "$conf:1:11: --log-level: invalid level 'loud'"
    printf 'port net_\000null0\n' >"$conf"
    bad_conf "NUL byte" "$conf:1:10: NUL byte"
    printf 'port net_null0\033[2J\n' >"$conf"
    bad_conf "control byte" "$conf:1:15: control byte 0x1b"
    { echo port net_null0; printf 'port %04096d\n' 0; } >"$conf"
    bad_conf "over-long line" "$conf:2:4096: line longer than 4095 bytes"
    awk 'BEGIN { for (i = 0; i < 1025; i++) print "duration 1" }' >"$conf"
    bad_conf "too many settings" "$conf:1025:1: more than 1024 settings"
    bad_conf "twice" "--config: given twice" --config "$conf"
    rm "$conf"
    bad_conf "missing file" "$conf: cannot read the configuration: No such"
    expect 2 "config: a directory" -- run --config "$ctldir" &&
        has "$err" "$ctldir: cannot read the configuration: a directory" \
            "config: a directory"
    # --log-level: the demo's message before the checks is info.
    (cd "$ctldir" && expect 2 "log level info" -- run --ctl "") &&
        has "$out" "simdpath: demo: " "info shown by default"
    (cd "$ctldir" && expect 2 "log level warning" -- run --ctl "" \
        --log-level warning) && has "$err" "control socket path is empty" \
        "log level warning: errors shown" && if grep -q demo "$out"; then
            echo "FAIL: --log-level warning shows info"
            failed=$((failed + 1))
        else passed=$((passed + 1)); fi
    expect 2 "bad log level" -- run --log-level verbose &&
        has "$err" "invalid level 'verbose'; expected error, warning, info" \
            "bad log level"
    # On the journal's stream, each line carries its syslog priority.
    JOURNAL_STREAM=$(stat -c %d:%i "$err") expect 2 "journal priority" -- \
        run --log-level verbose && has "$err" "<3>simdpath: --log-level" \
        "journal priority"
    bad_ctl "--ctl empty" "" "the control socket path is empty"
    bad_ctl "--ctl too long" "$ctldir/$(printf '%0120d' 0)" \
        "is longer than 107 bytes"
    bad_ctl "--ctl a directory" "$ctldir" "exists and is not a socket"
    bad_ctl "--ctl the flow file" "$ctldir/flows" "exists and is not a socket"
    if cmp -s "$ctldir/flows" "$ctldir/flows.orig"; then
        passed=$((passed + 1))
    else
        echo "FAIL: --ctl FILE changed the file"; failed=$((failed + 1))
    fi
    bad_ctl "--ctl in a missing directory" "$ctldir/none/ctl" \
        "control socket directory $ctldir/none: No such file or directory"
    bad_ctl "--ctl under a file" "$ctldir/flows/ctl" "is not a directory"
    bad_ctl "--ctl in a world-writable directory" "$ctldir/open/ctl" \
        "may be written by another user"
    if [ "$(id -u)" -eq 0 ]; then
        bad_ctl "--ctl where no socket can be made" /proc/simdpath.ctl \
            "cannot create control socket /proc/simdpath.ctl"
    else
        mkdir "$ctldir/ro" && chmod 0500 "$ctldir/ro"
        bad_ctl "--ctl in a read-only directory" "$ctldir/ro/ctl" \
            "cannot create control socket $ctldir/ro/ctl: Permission denied"
    fi
    SIMDPATH_CTL='' XDG_RUNTIME_DIR="$ctldir/open" expect 2 \
        "world-writable XDG_RUNTIME_DIR" -- run --port net_bogus0 \
        --flows "$ctldir/flows" &&
        has "$err" "directory $ctldir/open may be written by another user" \
            "world-writable XDG_RUNTIME_DIR"
    rm -rf "$ctldir"
else
    # Built without DPDK (the arm64 cross build): run says so.
    has "$err" "built without DPDK" "run without DPDK explains itself"
fi

expect 0 "self-check" -- check --rounds 3000 && has "$out" "PASS" "check"
expect 2 "check bad rounds" -- check --rounds x
# Numbers are digits: strtoul took "-1" as 2^64-1 rounds (hours), "+5",
# " 5"; values past the largest are refused, not wrapped.
for v in -1 +5 " 5" "5 " 0x10 "" 100000001 18446744073709551616; do
    expect 2 "check --rounds '$v'" -- check --rounds "$v" &&
        has "$err" "--rounds: invalid value '$v'; expected a number from 0" \
            "check --rounds '$v' names the value"
done
expect 2 "check --seed -1" -- check --seed -1 &&
    has "$err" "--seed: invalid value '-1'" "check --seed -1"
expect 2 "width with a blank" -- --max-simd " 128" impls
expect 2 "width with a sign" -- --max-simd +256 impls
expect 2 "check extra argument" -- check extra

# A capture of one 60-byte Ethernet/IPv4/UDP frame (10.0.0.1:1234 ->
# 192.168.1.2:53), written byte by byte.
{
printf '\324\303\262\241\002\000\004\000\000\000\000\000\000\000\000\000'
printf '\377\377\000\000\001\000\000\000\000\000\000\000\000\000\000\000'
printf '\074\000\000\000\074\000\000\000\000\021\042\063\104\125\146\167'
printf '\210\231\252\273\010\000\105\000\000\044\022\064\000\000\100\021'
printf '\000\000\012\000\000\001\300\250\001\002\004\322\000\065\000\020'
printf '\000\000\336\255\276\357\312\376\360\015\000\000\000\000\000\000'
printf '\000\000\000\000'
} >"$pcap"
flow="udp,in_port=0,dl_src=66:77:88:99:aa:bb,dl_dst=00:11:22:33:44:55"
flow="$flow,vlan_tci=0x0000,nw_src=10.0.0.1,nw_dst=192.168.1.2,nw_tos=0"
flow="$flow,nw_ecn=0,nw_ttl=64,ip_frag=no,tp_src=1234,tp_dst=53"
expect 0 "parse-pcap" -- parse-pcap "$pcap" &&
    has "$out" "1: ok: $flow" "parse-pcap prints the flow"
expect 0 "parse-pcap autovalidate" -- parse-pcap "$pcap" --impl autovalidate
expect 0 "parse-pcap options before" -- --impl mfex=scalar parse-pcap "$pcap"
expect 0 "parse-pcap max-simd" -- parse-pcap --max-simd 128 "$pcap"
expect 2 "parse-pcap bad impl" -- parse-pcap "$pcap" --impl bogus &&
    has "$err" "unknown variant 'bogus'" "parse-pcap bad impl"
expect 2 "parse-pcap no file" -- parse-pcap
expect 2 "parse-pcap missing file" -- parse-pcap /nonexistent/x.pcap &&
    has "$err" "parse-pcap: /nonexistent/x.pcap: No such file" \
        "parse-pcap names a missing file"
# Every refusal names the file, libpcap's header errors too.
: >"$pcap"
expect 2 "parse-pcap empty file" -- parse-pcap "$pcap" &&
    has "$err" "parse-pcap: $pcap: truncated dump file" \
        "parse-pcap names an empty file"
printf 'not a capture at all\n' >"$pcap"
expect 2 "parse-pcap not a capture" -- parse-pcap "$pcap" &&
    has "$err" "parse-pcap: $pcap: unknown file format" \
        "parse-pcap names a file that is no capture"
# A LINUX_SLL (113) capture header: not Ethernet, refused by name.
{
printf '\324\303\262\241\002\000\004\000\000\000\000\000'
printf '\000\000\000\000\377\377\000\000\161\000\000\000'
} >"$pcap"
expect 2 "parse-pcap LINUX_SLL" -- parse-pcap "$pcap" &&
    has "$err" "parse-pcap: $pcap: link type LINUX_SLL (113), not Ethernet" \
        "parse-pcap refuses LINUX_SLL by name"

# The man page names every option and command of the help texts.
if [ -n "$man" ]; then
    { run --help; run run --help; run ctl --help; } 2>/dev/null |
        grep -oE -- '--[a-z][a-z-]+' | sort -u >"$out"
    run --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
        on && /^  [a-z]/ { print $1 }' >>"$out"
    sed 's/\\-/-/g' "$man" >"$err"
    while read -r word; do
        if grep -qF -- "$word" "$err"; then
            passed=$((passed + 1))
        else
            echo "FAIL: the man page does not name '$word'"
            failed=$((failed + 1))
        fi
    done <"$out"
fi

if [ -n "$forced" ]; then
    SIMDPATH_IMPL=$forced expect 0 "forced by the caller" -- impls &&
        has "$out" "$forced (forced)" "SIMDPATH_IMPL=$forced is in use"
fi

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
