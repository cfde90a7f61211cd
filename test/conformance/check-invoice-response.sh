#!/usr/bin/env bash
# Checks the Invoice Responses the service builds (one per response code) with the official
# Peppol BIS Invoice Response rules (not shipped with the project: their licence does not allow it).
# See docs/api/invoice-response.md.
#
#   test/conformance/check-invoice-response.sh <rules-dir> [saxon-jar]
#
# <rules-dir> holds the compiled Schematron of the transaction as invoice-response.xslt
# (PEPPOLBIS-T111). Prints the failed asserts per document; exits 1 when any is fatal.
set -euo pipefail
rules="${1:?usage: check-invoice-response.sh <rules-dir> [saxon-jar]}"
saxon="${2:-/usr/share/java/Saxon-HE.jar}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$here/../.." && node --import tsx test/conformance/export-invoice-responses.ts "$work/xml")
status=0
for xml in "$work"/xml/*.xml; do
  name="$(basename "$xml" .xml)"
  java -jar "$saxon" -s:"$xml" -xsl:"$rules/invoice-response.xslt" -o:"$work/$name.svrl"
  failed="$(grep -c '<svrl:failed-assert' "$work/$name.svrl" || true)"
  echo "$name: $failed failed asserts"
  if [ "$failed" != "0" ]; then
    grep -o 'id="[A-Za-z0-9-]*"' "$work/$name.svrl" | sort | uniq -c
    if grep -q 'flag="fatal"' "$work/$name.svrl"; then status=1; fi
  fi
done
exit $status
