#!/usr/bin/env bash
# Prints the HOST:PORT to reach a PRICESVC_LISTEN value at: `:PORT` and `localhost:PORT` are 127.0.0.1,
# as pricesvc reads them (Configuration.swift, ListenAddress).
case $1 in
  :*) echo "127.0.0.1$1" ;;
  localhost:* | LOCALHOST:*) echo "127.0.0.1:${1#*:}" ;;
  *) echo "$1" ;;
esac
