#!/usr/bin/env node
require('../dist/src/client/main.js');
