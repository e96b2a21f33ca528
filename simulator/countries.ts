/** Destination field descriptor (docs/provider.md#beneficiaries). */
export interface FieldDescriptor {
  name: string;
  type: string;
  required: boolean;
  const?: string;
  enum?: string[];
  pattern?: string;
}

/** A supported payout country: the requirement the API answers, plus its currency (internal). */
export interface Country {
  code: string;
  name: string;
  flag: string;
  dialCode: string;
  /** Destination type (e.g. `MOBILEMONEY`) → the fields of such a destination. */
  destination: Record<string, FieldDescriptor[]>;
  /** The currency payouts to this country are paid in (not part of the answer). */
  currency: string;
}

const field = (name: string, extra: Partial<FieldDescriptor> = {}): FieldDescriptor => ({
  name,
  type: 'string',
  required: true,
  ...extra,
});

/** A BANK destination: bank code and account number patterns. */
const bank = (bankCode: string, accountNumber: string) => [
  field('type', { const: 'BANK' }),
  field('bankCode', { pattern: bankCode }),
  field('accountNumber', { pattern: accountNumber }),
  field('accountName'),
  field('bankName'),
];

/** A MOBILEMONEY destination: its networks, the account (phone) number pattern and, unless told otherwise, an account name. */
const mobileMoney = (networks: string[], accountNumber: string, withAccountName = true) => [
  field('type', { const: 'MOBILEMONEY' }),
  field('network', { enum: networks }),
  field('accountNumber', { pattern: accountNumber }),
  ...(withAccountName ? [field('accountName')] : []),
];

const country = (
  code: string,
  name: string,
  flag: string,
  dialCode: string,
  currency: string,
  destination: Country['destination'],
) => ({ code, name, flag, dialCode, currency, destination }) satisfies Country;

/**
 * Supported payout countries with realistic destination descriptors. Kenya is the provider's own
 * documented sample (GET supported-countries/KE): MOBILEMONEY only, `type` const, `network` enum
 * ["MPESA"], `accountNumber` pattern `^2547[\d]{8}$`, no `accountName`. The others are the
 * simulator's own.
 */
export const COUNTRIES: Record<string, Country> = {
  NG: country('NG', 'Nigeria', '🇳🇬', '+234', 'NGN', { BANK: bank('^\\d{3,6}$', '^\\d{10}$') }),
  GH: country('GH', 'Ghana', '🇬🇭', '+233', 'GHS', {
    BANK: bank('^\\d{6}$', '^\\d{10,16}$'),
    MOBILEMONEY: mobileMoney(['MTN', 'VODAFONE', 'AIRTELTIGO'], '^233\\d{9}$'),
  }),
  KE: country('KE', 'Kenya', '🇰🇪', '+254', 'KES', {
    MOBILEMONEY: mobileMoney(['MPESA'], '^2547[\\d]{8}$', false),
  }),
  UG: country('UG', 'Uganda', '🇺🇬', '+256', 'UGX', { MOBILEMONEY: mobileMoney(['MTN', 'AIRTEL'], '^256\\d{9}$') }),
};

/** The country by code (any case) or English name; undefined when unsupported. */
export function findCountry(codeOrName: unknown): Country | undefined {
  const key = String(codeOrName ?? '')
    .trim()
    .toUpperCase();
  return COUNTRIES[key] ?? Object.values(COUNTRIES).find((c) => c.name.toUpperCase() === key);
}

/** The country of a dialling code such as `+234` or `234`. */
export function countryOfDialCode(dialCode: string | null): Country | undefined {
  const wanted = `+${String(dialCode ?? '').replace(/^\+/, '')}`;
  return Object.values(COUNTRIES).find((c) => c.dialCode === wanted);
}

/**
 * Collection limits per country in MAJOR units of its currency (docs/provider.md#limits; GH is not
 * documented there, its bounds are the simulator's own).
 */
export const COLLECTION_LIMITS: Record<string, { currency: string; min: bigint; max: bigint }> = {
  NG: { currency: 'NGN', min: 100n, max: 2_000_000n },
  KE: { currency: 'KES', min: 20n, max: 145_000n },
  UG: { currency: 'UGX', min: 500n, max: 4_000_000n },
  GH: { currency: 'GHS', min: 1n, max: 100_000n },
};

/** Problems of a beneficiary destination against the country's descriptors (empty when valid). */
export function destinationProblems(country: Country, destination: unknown): string[] {
  if (!destination || typeof destination !== 'object' || Array.isArray(destination))
    return ['destination must be an object'];
  const dest = destination as Record<string, unknown>;
  const fields = country.destination[String(dest.type)];
  if (!fields)
    return [`destination.type must be one of ${Object.keys(country.destination).join(', ')} for ${country.code}`];
  const problems: string[] = [];
  for (const f of fields) {
    const value = dest[f.name];
    if (value === undefined || value === null || value === '') {
      if (f.required) problems.push(`destination.${f.name} is required`);
    } else if (typeof value !== 'string') problems.push(`destination.${f.name} must be a string`);
    else if (f.const !== undefined && value !== f.const) problems.push(`destination.${f.name} must be ${f.const}`);
    else if (f.enum && !f.enum.includes(value))
      problems.push(`destination.${f.name} must be one of ${f.enum.join(', ')}`);
    else if (f.pattern && !new RegExp(f.pattern).test(value))
      problems.push(`destination.${f.name} must match ${f.pattern}`);
  }
  return problems;
}
