import { isPrivateHost, subscriptionUrlProblem } from './subscription-url';

describe('subscription URL rules', () => {
  it('accepts https anywhere, in production too', () => {
    for (const production of [false, true]) {
      expect(subscriptionUrlProblem('https://app.example.com/hooks/wallet?tenant=7', production)).toBeNull();
      expect(subscriptionUrlProblem('https://10.0.0.8:8443/hooks', production)).toBeNull();
    }
  });

  it('accepts plain http only to loopback or private hosts, and never in production', () => {
    const local = [
      'http://127.0.0.1:8080/hooks',
      'http://localhost/hooks',
      'http://api.localhost/hooks',
      'http://[::1]:3000/',
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://172.31.255.255/',
      'http://192.168.1.10/',
      'http://[fd12:3456::1]/',
      'http://receiver:8080/hooks',
      'http://wallet-app.internal/hooks',
    ];
    for (const url of local) {
      expect([url, subscriptionUrlProblem(url, false)]).toEqual([url, null]);
      expect(subscriptionUrlProblem(url, true)).toBe('url must use https');
    }
    for (const url of ['http://example.com/hooks', 'http://8.8.8.8/', 'http://172.32.0.1/', 'http://[2001:db8::1]/']) {
      expect(subscriptionUrlProblem(url, false)).toMatch(/https/);
    }
  });

  it('refuses other schemes, credentials, fragments, relative and oversized URLs', () => {
    expect(subscriptionUrlProblem('ftp://127.0.0.1/x', false)).toBe('url must use https');
    expect(subscriptionUrlProblem('javascript:alert(1)', false)).toBe('url must use https');
    expect(subscriptionUrlProblem('https://user:pw@app.example.com/', false)).toBe('url must not contain credentials');
    expect(subscriptionUrlProblem('https://app.example.com/#x', false)).toBe('url must not contain a fragment');
    expect(subscriptionUrlProblem('/hooks', false)).toMatch(/absolute/);
    expect(subscriptionUrlProblem('', false)).toMatch(/absolute/);
    expect(subscriptionUrlProblem(`https://app.example.com/${'a'.repeat(2048)}`, false)).toMatch(/at most/);
  });

  it('tells private from public hosts', () => {
    expect(isPrivateHost('127.8.9.10')).toBe(true);
    expect(isPrivateHost('[::ffff:192.168.0.1]')).toBe(true);
    expect(isPrivateHost('169.254.169.254')).toBe(false);
    expect(isPrivateHost('example.com')).toBe(false);
    expect(isPrivateHost('LOCALHOST.')).toBe(true);
  });
});
