#!/usr/bin/env bash
# drive.sh CHROME CHROMEDRIVER OUTFILE [extra chrome args...]: loads $PAGE (probe.html) by file:// in
# Chrome through chromedriver (HTTP by bash's /dev/tcp: no curl or python needed), runs
# runProbe(BASE, $SHAPES), writes chromedriver's answer (JSON) to OUTFILE and the page's log to OUTFILE.log.
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
chrome=$1 driver=$2 outf=$3; shift 3
port=${PORT:-9611}
"$driver" --port=$port > /tmp/probe-driver.log 2>&1 &
dpid=$!
trap 'kill $dpid 2>/dev/null' EXIT
req() { # METHOD PATH [BODY]
  local body=${3:-} r
  exec 3<>/dev/tcp/127.0.0.1/$port || return 1
  printf '%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' "$1" "$2" "${#body}" "$body" >&3
  local line len=0
  while IFS= read -r line <&3; do
    line=${line%$'\r'}
    [ -z "$line" ] && break
    case "${line,,}" in content-length:*) len=${line#*:}; len=${len// /} ;; esac
  done
  head -c "$len" <&3; exec 3<&-
}
for i in $(seq 50); do req GET /status >/dev/null 2>&1 && break; sleep 0.2; done
args='"--headless=new","--no-sandbox","--enable-unsafe-webgpu","--enable-webgpu-developer-features","--disable-dev-shm-usage","--user-data-dir=/tmp/probe-profile"'
for a in "$@"; do args="$args,\"$a\""; done
sess=$(req POST /session "{\"capabilities\":{\"alwaysMatch\":{\"browserName\":\"chrome\",\"goog:chromeOptions\":{\"binary\":\"$chrome\",\"args\":[$args]}}}}")
sid=$(printf '%s' "$sess" | sed -n 's/.*"sessionId":"\([^"]*\)".*/\1/p')
[ -n "$sid" ] || { echo "no session: $sess"; exit 2; }
req POST /session/$sid/timeouts "{\"script\":${SCRIPT_MS:-400000}}" >/dev/null
req POST /session/$sid/url "{\"url\":\"${URL:-file://$here/${PAGE:-probe.html}}\"}" >/dev/null
req POST /session/$sid/execute/async "{\"script\":\"const done=arguments[arguments.length-1]; window.runProbe(window.BASE, ${SHAPES:-null}).then(r=>done(JSON.stringify(r))).catch(e=>done(JSON.stringify({fatal:String(e)})));\",\"args\":[]}" > "$outf"
req POST /session/$sid/execute/sync '{"script":"return JSON.stringify(window.probeLog)","args":[]}' > "$outf.log"
req DELETE /session/$sid >/dev/null
