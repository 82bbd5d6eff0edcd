'use strict'
module.exports = require('./build/Release/squeeze_lz4.node')
