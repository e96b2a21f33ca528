import { bodyOf, conflict, envelope, notFound, optString, str } from '../http';
import { op } from '../operations';
import type { Customer, SimulatorState } from '../state';
import { customerView, pageMeta } from '../views';
import { param, type RouteModule } from './context';

const DUPLICATE = 'Customer with this email already exists';

function customerById(state: SimulatorState, id: string): Customer {
  const customer = state.customers.get(id);
  if (!customer) throw notFound('Customer');
  return customer;
}

/** createCustomer (POST /customers/ and /customers), updateCustomer, getCustomer. */
export const customerRoutes: RouteModule = (api, { state }) => {
  const create = async (request: { body: unknown }) => {
    const body = bodyOf(request);
    const email = str(body, 'email');
    if (state.customerByEmail(email)) throw conflict(DUPLICATE);
    const customer: Customer = {
      ...state.stamp(),
      email,
      blacklist: false,
      firstName: optString(body, 'firstName') ?? null,
      lastName: optString(body, 'lastName') ?? null,
      phone: optString(body, 'phone') ?? null,
      countryCode: optString(body, 'countryCode') ?? null,
    };
    state.customers.set(customer.id, customer);
    return envelope(customerView(customer), 'Customer created successfully');
  };
  api.post('/customers/', op('createCustomer'), create);
  api.post('/customers', op('createCustomer'), create);

  api.put('/customers/:id', op('updateCustomer'), async (request) => {
    const customer = customerById(state, param(request, 'id'));
    const body = bodyOf(request);
    const firstName = str(body, 'firstName');
    const email = str(body, 'email');
    const other = state.customerByEmail(email);
    if (other && other.id !== customer.id) throw conflict(DUPLICATE);
    Object.assign(customer, {
      firstName,
      email,
      lastName: optString(body, 'lastName') ?? customer.lastName,
      phone: optString(body, 'phone') ?? customer.phone,
      countryCode: optString(body, 'countryCode') ?? customer.countryCode,
    });
    state.touch(customer);
    return envelope({ ...customerView(customer), transactions: [] }, 'Customer updated successfully');
  });

  api.get('/customers/:id', op('getCustomer'), async (request) => {
    const customer = customerById(state, param(request, 'id'));
    return envelope(
      { ...customerView(customer), customerId: customer.id, meta: pageMeta(1, 10, 0) },
      'Customer retrieved successfully',
    );
  });
};
