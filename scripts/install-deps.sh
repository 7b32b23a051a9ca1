#!/bin/sh
# install-deps.sh - install the Debian packages djc builds, tests and demos
# with, when any is missing. Idempotent and quick when all are present.
set -e
PKGS="build-essential pkg-config libsqlite3-dev sqlite3 libpq-dev libmariadb-dev libjansson-dev
postgresql postgresql-contrib mariadb-server mariadb-client python3 iproute2 procps"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "djc: installing Debian packages:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# Services must not start at install time: the tests start their own servers.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
	$SUDO chmod +x /usr/sbin/policy-rc.d
	trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
