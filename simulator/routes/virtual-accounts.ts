import { randomDigits } from '../generate';
import { badRequest, bodyOf, envelope, optString, requireFields, str } from '../http';
import { op } from '../operations';
import type { VirtualAccount } from '../state';
import { virtualAccountView } from '../views';
import type { RouteModule } from './context';

/** The two supported banks: request value → bank name answered. */
export const VIRTUAL_ACCOUNT_BANKS: Record<string, string> = { safehaven: 'Safe Haven MFB', providus: 'Providus Bank' };

/** createVirtualAccount: `bank` is safehaven or providus; providus needs dateOfBirth (yyyy-mm-dd). */
export const virtualAccountRoutes: RouteModule = (api, { state }) => {
  api.post('/virtual-accounts', op('createVirtualAccount'), async (request) => {
    const body = bodyOf(request);
    requireFields(body, ['customerEmail', 'reference', 'bank']);
    const customer = state.requireCustomer(body.customerEmail);
    const bank = str(body, 'bank');
    const bankName = VIRTUAL_ACCOUNT_BANKS[bank];
    if (!bankName) throw badRequest(`bank must be one of ${Object.keys(VIRTUAL_ACCOUNT_BANKS).join(', ')}`);
    const dateOfBirth = optString(body, 'dateOfBirth');
    if (bank === 'providus' && !dateOfBirth) throw badRequest('dateOfBirth is required for providus');
    if (dateOfBirth && !/^\d{4}-\d{2}-\d{2}$/.test(dateOfBirth)) throw badRequest('dateOfBirth must be yyyy-mm-dd');
    const reference = str(body, 'reference');
    state.claimReference('virtualAccount', reference);
    const first = optString(body, 'firstName') ?? customer.firstName ?? '';
    const last = optString(body, 'lastName') ?? customer.lastName ?? '';
    const account: VirtualAccount = {
      ...state.stamp(),
      customerId: customer.id,
      bank,
      bankName,
      reference,
      accountName: `${first} ${last}`.trim(),
      accountNumber: randomDigits(10),
      status: 'active',
    };
    state.virtualAccounts.set(account.id, account);
    return envelope(virtualAccountView(account), 'Virtual account created successfully');
  });
};
