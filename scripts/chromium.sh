#!/usr/bin/env bash
# Headless Chromium and its WebDriver, chromedriver (Debian's `chromium` and `chromium-driver`),
# for the web console's browser tests (shared/console/tests/browser, the `console` test binary).
#   scripts/chromium.sh install   install them when missing (make unit runs this; so does warm.sh)
# The tests find them at /usr/bin/chromium and /usr/bin/chromedriver (CHROMIUM_BIN and
# CHROMEDRIVER_BIN name others).
source "$(dirname "$0")/lib.sh"

case "${1:-install}" in
  install)
    need_apt chromium chromium chromium-driver
    need_apt chromedriver chromium-driver
    ;;
  *)
    log "usage: scripts/chromium.sh install"
    exit 2
    ;;
esac
