#!/usr/bin/env bash
# Regenerate bench/data/baseline.json (after adding a planner or a graph, or
# after a deliberate change in results): see bench/baseline.sh.
exec "$(dirname "$0")/baseline.sh" --update
