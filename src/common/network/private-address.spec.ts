import { isPrivateAddress, isPrivateHostname } from './private-address';

const hostnameOf = (url: string) => new URL(url).hostname;

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '192.0.2.10',
    '198.18.0.1',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '::7f00:1',
    '2001:db8::1',
    '2002:7f00:1::1',
    '2002:808:808::1',
  ])('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '192.169.0.1',
    '169.255.0.1',
    '93.184.215.14',
    '2606:4700:4700::1111',
    '2a00:1450:4001:82a::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
  ])('allows %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it('is false for names, which the delivery engine judges after DNS', () => {
    expect(isPrivateAddress('example.com')).toBe(false);
  });
});

describe('isPrivateHostname', () => {
  it.each([
    'https://127.0.0.1/hook',
    'https://127.1/hook',
    'https://2130706433/hook',
    'https://0x7f000001/hook',
    'https://0177.0.0.1/hook',
    'https://0/hook',
    'https://10.0.0.1:8443/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[0:0:0:0:0:ffff:7f00:1]/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://localhost/hook',
    'https://LOCALHOST./hook',
    'https://api.localhost/hook',
  ])('refuses the host of %s', (url) => {
    expect(isPrivateHostname(hostnameOf(url))).toBe(true);
  });

  it.each([
    'https://example.com/hook',
    'https://8.8.8.8/hook',
    'https://[2606:4700::1111]/hook',
    'https://localhost.example.com/',
  ])('allows the host of %s', (url) => {
    expect(isPrivateHostname(hostnameOf(url))).toBe(false);
  });
});
