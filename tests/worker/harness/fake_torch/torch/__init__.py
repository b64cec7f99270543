"""A stand-in for torch, for the Python runner's protocol test on machines without one: just the
calls the runner makes, recording kernel launches the way the profiler would name them."""

LAUNCHES: list[str] = []  # kernel names, in order (the fake profiler's trace)
uint8 = "uint8"


class Tensor:
    def __init__(self, address=0, shape=()):
        self.address, self.shape = address, shape

    def data_ptr(self):
        return self.address

    def fill_(self, value):
        LAUNCHES.append("void at::native::vectorized_elementwise_kernel<4, at::native::"
                        "FillFunctor<unsigned char>, std::array<char*, 1ul> >(int)")
        return self

    def zero_(self):
        LAUNCHES.append("Memset (Device)")
        return self


def zeros(*shape, device=None):
    return Tensor()


def empty(*shape, dtype=None, device=None):
    return Tensor()


def as_tensor(obj, device=None):
    cai = obj.__cuda_array_interface__
    return Tensor(cai["data"][0], cai["shape"])


class _Props:
    L2_cache_size = 1 << 20


class _Event:
    def __init__(self, enable_timing=False):
        pass

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return 0.25


class cuda:  # noqa: N801 - the module's name
    Event = _Event

    @staticmethod
    def init():
        pass

    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def default_stream():
        return "stream0"

    @staticmethod
    def set_stream(stream):
        pass

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def get_device_properties(index):
        return _Props()

