// Runs the @nestjs/swagger CLI plugin inside ts-jest, with the options nest-cli.json gives `nest build`.
const plugin = require('@nestjs/swagger/plugin');
const { compilerOptions } = require('../../nest-cli.json');

const { options } = compilerOptions.plugins.find((entry) => entry.name === '@nestjs/swagger');

module.exports = {
  name: 'nestjs-swagger-plugin',
  version: 1,
  factory: (compiler) => plugin.before(options, compiler.program),
};
