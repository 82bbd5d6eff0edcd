#!/bin/bash
exec /opt/kafka/bin/kafka-run-class.sh kafka.tools.StorageTool "$@"
