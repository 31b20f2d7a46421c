// Why an allocation failed, with kube-apiserver's wording (its ipallocator and portallocator
// errors): the service registry wraps these into 422 field errors or a 500.

export type AllocationFailure = 'NotInRange' | 'MismatchedNetwork' | 'Allocated' | 'Full';

export class AllocationError extends Error {
  constructor(
    readonly reason: AllocationFailure,
    message: string,
  ) {
    super(message);
  }
}

export const ipErrors = {
  full: () => new AllocationError('Full', 'range is full'),
  allocated: () => new AllocationError('Allocated', 'provided IP is already allocated'),
  /** the address lies in no configured service range */
  mismatchedNetwork: () => new AllocationError('MismatchedNetwork', 'the provided network does not match the current range'),
  /** inside the range's prefix but not allocatable (the network or broadcast address) */
  notInRange: (ip: string, cidr: string) =>
    new AllocationError('NotInRange', `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${cidr}`),
};

export const portErrors = {
  full: () => new AllocationError('Full', 'range is full'),
  allocated: () => new AllocationError('Allocated', 'provided port is already allocated'),
  notInRange: (range: string) =>
    new AllocationError('NotInRange', `provided port is not in the valid range. The range of valid ports is ${range}`),
};
