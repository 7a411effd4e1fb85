/**
 * portal.phone-code: sends one phone verification code. A provider's refusal, or no channel able to
 * reach a new number, fails for good (the person asks again); transient faults are retried.
 */
import { UnrecoverableError } from 'bullmq';
import type { JobHandler } from '../runner.js';
import { deliverPhoneCode, PhoneCodeUndeliverable } from '../../shared/portal/phone-proof.js';

export const sendPhoneCode: JobHandler<'portal.phone-code'> = async (payload) => {
  try {
    return await deliverPhoneCode(payload);
  } catch (err) {
    if (err instanceof PhoneCodeUndeliverable) throw new UnrecoverableError(err.message);
    throw err;
  }
};
