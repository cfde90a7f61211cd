#!/usr/bin/env bash
# Builds the phase4 test peer: target/phase4-test-peer.jar with its dependencies in target/lib/.
# Maven downloads from Maven Central on a clean machine (a few minutes) and uses ~/.m2 afterwards.
set -euo pipefail
cd "$(dirname "$0")"
mvn -B -q -DskipTests package "$@"
test -f target/phase4-test-peer.jar
echo "phase4 test peer built: $(pwd)/target/phase4-test-peer.jar"
