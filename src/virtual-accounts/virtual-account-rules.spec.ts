import { isCalendarDate, virtualAccountProblems } from './virtual-account-rules';

const TODAY = new Date('2026-06-15T10:00:00.000Z');

describe('virtual account rules', () => {
  it('requires dateOfBirth for providus only', () => {
    expect(virtualAccountProblems({ bank: 'providus' }, TODAY)).toEqual([
      { field: 'dateOfBirth', message: 'dateOfBirth is required for bank providus' },
    ]);
    expect(virtualAccountProblems({ bank: 'providus', dateOfBirth: '' }, TODAY)[0]?.field).toBe('dateOfBirth');
    expect(virtualAccountProblems({ bank: 'providus', dateOfBirth: '1990-04-01' }, TODAY)).toEqual([]);
    expect(virtualAccountProblems({ bank: 'safehaven' }, TODAY)).toEqual([]);
  });

  it('checks a given dateOfBirth for any bank', () => {
    expect(virtualAccountProblems({ bank: 'safehaven', dateOfBirth: '1990-02-30' }, TODAY)[0]?.field).toBe(
      'dateOfBirth',
    );
    expect(virtualAccountProblems({ bank: 'safehaven', dateOfBirth: '2026-06-16' }, TODAY)).toEqual([
      { field: 'dateOfBirth', message: 'dateOfBirth must not be in the future' },
    ]);
    expect(virtualAccountProblems({ bank: 'safehaven', dateOfBirth: '2026-06-15' }, TODAY)).toEqual([]);
  });

  it('accepts real yyyy-mm-dd dates only', () => {
    expect(isCalendarDate('2000-02-29')).toBe(true);
    expect(isCalendarDate('1900-02-29')).toBe(false);
    expect(isCalendarDate('1990-13-01')).toBe(false);
    expect(isCalendarDate('1990-1-01')).toBe(false);
    expect(isCalendarDate('01-04-1990')).toBe(false);
    expect(isCalendarDate('1990-04-01T00:00:00Z')).toBe(false);
  });
});
