# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled rows of :class:`~hdeeprm.outputs.stream.CsvStream`: machine states, pstate changes, energy.

A replay that writes Batsim's outputs spends most of its output time making the rows of
``out_machine_states.csv``, ``out_pstate_changes.csv`` and ``out_consumed_energy.csv`` (several per job
start, end and pstate switch). :class:`StreamRows` makes them in C buffers, numbers converted by
CPython's own ``PyOS_double_to_string`` (the conversion behind ``"%f" % x`` and ``f"{x:g}"``), so the text
is the same to the byte as the pure-Python path of :mod:`hdeeprm.outputs.stream` and
:mod:`hdeeprm.outputs.batsim_csv` (``machine_state_row``, ``EnergyRows``, ``pstate_rows``,
``ascending_interval_set``), which stays the fallback when this extension is not built;
``tests/outputs/test_rows_kernel.py`` checks both give the same bytes.

The platform energy written with a row is ``offset + power * now`` (:class:`~hdeeprm.simulation.energy.EnergyAccount`),
computed here with the same two IEEE 754 double operations (the build turns floating-point contraction off).
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeASCII
from libc.math cimport floor, signbit
from libc.stdio cimport snprintf
from libc.string cimport memcpy, strlen


cdef extern from "Python.h":
    char* PyOS_double_to_string(double val, char format_code, int precision, int flags, int *ptype) except NULL


#: Below this magnitude ``x * 1e6`` is under 2**52 (its ulp at most 0.5): :func:`_fixed6` converts it itself.
cdef double FAST_BELOW = 4.5e9


cdef int _fixed6(double x, char* out) noexcept:
    """``"%f" % x`` into ``out`` (at least 24 bytes) for ``|x| < FAST_BELOW``; its length, or -1 (not handled).

    The exact binary value of ``x`` rounded to 6 decimals, ties to even, as CPython's correctly rounded
    conversion does: ``|x| * 1e6 = p + e`` exactly (Dekker's product, 1e6 having 20 significant bits), and the
    rounding of ``p + e`` to an integer is decided by exact comparisons (Dekker, "A floating-point technique for
    extending the available precision", Numerische Mathematik 18, 1971). A value whose fraction is within
    rounding of one half is still decided exactly; NaN, infinities and larger values return -1.
    """
    cdef double a = -x if signbit(x) else x
    cdef double p, e, c, ah, al, k, frac, d
    cdef long long n, whole
    cdef int length = 0, i
    cdef char digits[24]
    if not a < FAST_BELOW:   # also NaN
        return -1
    p = a * 1e6
    c = 134217729.0 * a   # Dekker's split of a into two halves of 26 bits
    ah = c - (c - a)
    al = a - ah
    e = (ah * 1e6 - p) + al * 1e6   # a * 1e6 - p, exactly
    k = floor(p)
    frac = p - k   # exact
    n = <long long> k
    if frac >= 0.25:   # below, frac + e < 0.5 (|e| <= ulp(p) / 2 <= 0.25): p + e rounds down to n
        d = 0.5 - frac   # exact (frac within a factor 2 of 0.5): frac + e > 0.5 exactly when e > d
        if e > d or (e == d and n % 2 == 1):
            n += 1
    if signbit(x):
        out[0] = b'-'
        length = 1
    whole = n // 1000000
    n = n % 1000000
    i = 0
    while True:
        digits[i] = <char> (48 + whole % 10)
        whole //= 10
        i += 1
        if whole == 0:
            break
    while i:
        i -= 1
        out[length] = digits[i]
        length += 1
    out[length] = b'.'
    for i in range(6, 0, -1):
        out[length + i] = <char> (48 + n % 10)
        n //= 10
    return length + 7


def fixed6(double x) -> str:
    """``"%f" % x`` as this module writes it (its own conversion below 4.5e9, CPython's above): for the tests."""
    cdef _Text text = _Text()
    text.add_double(x, b'f')
    return text.pop()


cdef class _Text:
    """A growable ASCII buffer."""

    cdef char* data
    cdef Py_ssize_t size, cap

    def __cinit__(self):
        self.cap = 256
        self.size = 0
        self.data = <char*> PyMem_Malloc(self.cap)
        if self.data == NULL:
            raise MemoryError()

    def __dealloc__(self):
        PyMem_Free(self.data)

    cdef int _room(self, Py_ssize_t n) except -1:
        cdef Py_ssize_t cap = self.cap
        cdef char* grown
        if self.size + n <= cap:
            return 0
        while self.size + n > cap:
            cap *= 2
        grown = <char*> PyMem_Realloc(self.data, cap)
        if grown == NULL:
            raise MemoryError()
        self.data, self.cap = grown, cap
        return 0

    cdef int add(self, const char* text, Py_ssize_t n) except -1:
        self._room(n)
        memcpy(self.data + self.size, text, n)
        self.size += n
        return 0

    cdef int add_text(self, _Text other) except -1:
        return self.add(other.data, other.size)

    cdef int add_char(self, char c) except -1:
        self._room(1)
        self.data[self.size] = c
        self.size += 1
        return 0

    cdef int add_double(self, double x, char code) except -1:
        """``"%f" % x`` (code 'f': :func:`_fixed6` when it can) or ``f"{x:g}"`` (code 'g'): CPython's text."""
        cdef int n
        if code == b'f':
            self._room(24)
            n = _fixed6(x, self.data + self.size)
            if n >= 0:
                self.size += n
                return 0
        cdef char* text = PyOS_double_to_string(x, code, 6, 0, NULL)
        try:
            self.add(text, strlen(text))
        finally:
            PyMem_Free(text)
        return 0

    cdef int add_long(self, long long v) except -1:
        cdef char digits[32]
        cdef int n = snprintf(digits, 32, "%lld", v)
        return self.add(digits, n)

    cdef int add_str(self, str text) except -1:
        cdef Py_ssize_t n
        cdef const char* data = PyUnicode_AsUTF8AndSize(text, &n)
        return self.add(data, n)

    cdef str pop(self):
        """The text so far as a str; the buffer is emptied."""
        cdef str out = PyUnicode_DecodeASCII(self.data, self.size, NULL)
        self.size = 0
        return out


cdef class StreamRows:
    """Rows of the machine-state, pstate-change and energy files of a streamed run with energy.

    The methods are :class:`~hdeeprm.simulation.recording.Recorder`'s (``job_started``, ``job_ended``,
    ``switching``, ``switched``, ``switched_groups``); :class:`~hdeeprm.outputs.stream.CsvStream` binds them
    in place of its own when this extension is built. Every row of those three files must come from here
    (the rows carry state: the previous energy row, the last machine-state row).

    Args:
        nb_hosts: Number of compute hosts.
        account: The engine's :class:`~hdeeprm.simulation.energy.EnergyAccount` (read: ``offset``, ``power``,
            ``wattmin``).
        machine_states, pstate_changes, consumed_energy: The ``write`` methods of the three open files.
        host_text: ``host_text(hosts)``: the interval-set text of distinct host ids in any order
            (:func:`~hdeeprm.outputs.batsim_csv.distinct_interval_set`), for the groups this class does not
            write itself (not a list of ascending ids).
    """

    cdef long long nb_hosts
    cdef object account, ms_write, ps_write, en_write, host_text
    cdef _Text ms, ps, en, head, wattmin_text, t_text, ms_row, tg
    # EnergyRows' state: time and energy of the previous row (0, 0 before the first)
    cdef double t, e, wattmin, text_t
    cdef bint has_wattmin, has_text_t
    # the machine-state row kept while time and load do not change
    cdef double ms_now
    cdef long long ms_busy
    cdef bint has_ms

    def __init__(self, long long nb_hosts, account, machine_states, pstate_changes, consumed_energy, host_text):
        self.nb_hosts = nb_hosts
        self.account = account
        self.ms_write, self.ps_write, self.en_write = machine_states, pstate_changes, consumed_energy
        self.host_text = host_text
        self.ms, self.ps, self.en = _Text(), _Text(), _Text()
        self.head, self.wattmin_text, self.t_text, self.ms_row, self.tg = _Text(), _Text(), _Text(), _Text(), _Text()
        self.t = self.e = 0.0
        self.has_wattmin = self.has_text_t = self.has_ms = False
        self.ms_busy = -1

    cdef double _energy(self, double now) except? -1.0:
        cdef double offset = self.account.offset
        cdef double power = self.account.power
        return offset + power * now

    cdef int _machine_state(self, double now, long long nb_busy) except -1:
        """Keep the machine-state row of ``now`` in :attr:`ms_row` (and its ``%g,`` time text in :attr:`tg`)."""
        cdef Py_ssize_t i
        if not self.has_ms or now != self.ms_now or nb_busy != self.ms_busy:
            row = self.ms_row
            row.size = 0
            row.add_double(now, b'g')
            row.add(",0,0,0,", 7)
            row.add_long(self.nb_hosts - nb_busy)
            row.add_char(b',')
            row.add_long(nb_busy)
            row.add_char(b'\n')
            if not self.has_ms or now != self.ms_now:
                self.tg.size = 0
                i = 0
                while row.data[i] != b',':
                    i += 1
                self.tg.add(row.data, i + 1)
            self.has_ms, self.ms_now, self.ms_busy = True, now, nb_busy
        return 0

    cdef int _wattmin(self, double wattmin) except -1:
        if not self.has_wattmin or wattmin != self.wattmin:
            self.has_wattmin, self.wattmin = True, wattmin
            self.wattmin_text.size = 0
            self.wattmin_text.add_double(wattmin, b'f')
        return 0

    cdef int _row(self, double t, double e, char kind, double wattmin) except -1:
        """EnergyRows.row into :attr:`en`."""
        cdef double dt = 0.0
        cdef bint na
        if t == self.t and e == self.e and self.head.size:
            na = True
        else:
            dt = t - self.t
            na = not dt > 0
            if not self.has_text_t or t != self.text_t:
                self.has_text_t, self.text_t = True, t
                self.t_text.size = 0
                self.t_text.add_double(t, b'f')
                self.t_text.add_char(b',')
            self.head.size = 0
            self.head.add_text(self.t_text)
            self.head.add_double(e, b'f')
            self.head.add_char(b',')
            if not na:
                dt = (e - self.e) / dt
            self.t, self.e = t, e
        return self._tail(kind, wattmin, na, dt)

    cdef int _again(self, char kind, double wattmin) except -1:
        """EnergyRows.again into :attr:`en`."""
        return self._tail(kind, wattmin, True, 0.0)

    cdef int _tail(self, char kind, double wattmin, bint na, double epower) except -1:
        """The row after its ``time,energy,`` head: ``kind,wattmin,epower`` (``NA`` when ``na``), into :attr:`en`."""
        cdef _Text en = self.en
        self._wattmin(wattmin)
        en.add_text(self.head)
        en.add_char(kind)
        en.add_char(b',')
        en.add_text(self.wattmin_text)
        en.add_char(b',')
        if na:
            en.add("NA", 2)
        else:
            en.add_double(epower, b'f')
        en.add_char(b'\n')
        return 0

    cdef int _hosts(self, _Text out, object hosts, bint ascending) except -1:
        """The interval-set text of a group's hosts (``ascending_interval_set`` / ``distinct_interval_set``)."""
        cdef list ids
        cdef Py_ssize_t n, k
        cdef long long lo, prev, h
        if ascending and type(hosts) is list and len(<list> hosts) > 0:
            ids = <list> hosts
            n = len(ids)
            prev = ids[0]
            for k in range(1, n):
                h = ids[k]
                if h <= prev:   # not ascending after all: the Python text, whatever the ids
                    out.add_str(self.host_text(hosts))
                    return 0
                prev = h
            k = 0
            while k < n:   # one run after the other (ids ascending and distinct), separated by spaces
                lo = prev = ids[k]
                if k:
                    out.add_char(b' ')
                k += 1
                while k < n and <long long> ids[k] == prev + 1:
                    prev = ids[k]
                    k += 1
                out.add_long(lo)
                if prev != lo:
                    out.add_char(b'-')
                    out.add_long(prev)
            return 0
        out.add_str(self.host_text(hosts))
        return 0

    cdef int _pstate_rows(self, _Text time_text, object hosts, long long pstate, bint ascending) except -1:
        """The two rows of one switch (``-1`` then the pstate) into :attr:`ps`."""
        cdef _Text ps = self.ps
        cdef Py_ssize_t start = ps.size, n
        ps.add_text(time_text)
        self._hosts(ps, hosts, ascending)
        ps.add_char(b',')
        n = ps.size - start
        ps.add("-1\n", 3)
        ps._room(n)
        memcpy(ps.data + ps.size, ps.data + start, n)
        ps.size += n
        ps.add_long(pstate)
        ps.add_char(b'\n')
        return 0

    cdef int _write_machine_state(self, double now, long long nb_busy) except -1:
        """Write the machine-state row of ``now``."""
        self._machine_state(now, nb_busy)
        self.ms_write(PyUnicode_DecodeASCII(self.ms_row.data, self.ms_row.size, NULL))
        return 0

    cdef int _write_energy(self, double now, char kind) except -1:
        """Write the energy row of an event of ``kind`` at ``now``, from the account as it is."""
        self._row(now, self._energy(now), kind, self.account.wattmin)
        self.en_write(self.en.pop())
        return 0

    def job_started(self, double now, long long nb_busy):
        """See :meth:`~hdeeprm.simulation.recording.Recorder.job_started`."""
        self._write_machine_state(now, nb_busy)
        self._write_energy(now, b's')

    def job_ended(self, double now, long long nb_busy):
        """See :meth:`~hdeeprm.simulation.recording.Recorder.job_ended`."""
        self._write_machine_state(now, nb_busy)
        self._write_energy(now, b'e')

    def switching(self, double now):
        """See :meth:`~hdeeprm.simulation.recording.Recorder.switching`."""
        self._write_energy(now, b'p')

    def switched(self, double now, hosts, long long pstate, long long nb_busy):
        """See :meth:`~hdeeprm.simulation.recording.Recorder.switched`."""
        cdef _Text time_text = _Text()
        time_text.add_double(now, b'g')
        time_text.add_char(b',')
        self._pstate_rows(time_text, hosts, pstate, False)
        self.ps_write(self.ps.pop())
        self._write_machine_state(now, nb_busy)
        self._write_energy(now, b'p')

    def switched_groups(self, double now, list groups, wattmins, long long nb_busy, bint ascending=False):
        """See :meth:`~hdeeprm.simulation.recording.Recorder.switched_groups`."""
        cdef Py_ssize_t g, n = len(groups)
        cdef _Text ms = self.ms
        self._machine_state(now, nb_busy)
        for g in range(n):
            ms.add_text(self.ms_row)
        self.ms_write(ms.pop())
        for g in range(n):
            hosts, pstate = groups[g]
            self._pstate_rows(self.tg, hosts, pstate, ascending)
        self.ps_write(self.ps.pop())
        self._row(now, self._energy(now), b'p', wattmins[0])
        self._again(b'p', wattmins[1])
        for g in range(1, n):   # the wattmin after group g - 1 is the one before group g
            self._again(b'p', wattmins[g])
            self._again(b'p', wattmins[g + 1])
        self.en_write(self.en.pop())


cdef class JobRows:
    """Rows of ``out_jobs.csv`` of the jobs that ran (:func:`~hdeeprm.outputs.batsim_csv.format_job_row`'s text).

    Args:
        name: The workload name (``workload_name`` column).
        write: The ``write`` method of the open ``out_jobs.csv``.
        python_row: :func:`~hdeeprm.outputs.batsim_csv.job_row`, for a rejected job (written through it, rare).
        host_text: :func:`~hdeeprm.outputs.batsim_csv.distinct_interval_set` (allocations that are not one run
            of consecutive ids).
        stretch: :func:`~hdeeprm.outputs.metrics.job_slowdown` (the one definition of the stretch).
        success: ``JobState.COMPLETED_SUCCESSFULLY``; rejected: ``JobState.REJECTED``.
    """

    cdef object write, python_row, host_text, stretch, success, rejected
    cdef str workload
    cdef _Text name, row

    def __init__(self, str name, write, python_row, host_text, stretch, success, rejected):
        self.workload = name
        self.write, self.python_row, self.host_text, self.stretch = write, python_row, host_text, stretch
        self.success, self.rejected = success, rejected
        self.name, self.row = _Text(), _Text()
        self.name.add_str(name)

    cdef int _field(self, object value) except -1:
        """``"%s" % value``, then a comma."""
        if type(value) is int:
            self.row.add_long(value)
        else:
            self.row.add_str(value if type(value) is str else str(value))
        self.row.add_char(b',')
        return 0

    cdef int _number(self, double value) except -1:
        """``"%f" % value``, then a comma."""
        self.row.add_double(value, b'f')
        self.row.add_char(b',')
        return 0

    cdef int _hosts(self, object allocation) except -1:
        """``distinct_interval_set(allocation)``, written here when the ids are one run."""
        cdef tuple ids
        cdef Py_ssize_t k, n
        cdef long long lo, hi, h
        if type(allocation) is tuple and len(<tuple> allocation) > 0:
            ids = <tuple> allocation
            n = len(ids)
            lo = hi = ids[0]
            for k in range(1, n):
                h = ids[k]
                if h < lo:
                    lo = h
                elif h > hi:
                    hi = h
            if hi - lo + 1 == n:   # distinct ids: exactly lo..hi
                self.row.add_long(lo)
                if hi != lo:
                    self.row.add_char(b'-')
                    self.row.add_long(hi)
                return 0
        self.row.add_str(self.host_text(allocation))
        return 0

    def job_finished(self, job, state, double start, double finish, allocation, double energy, str reason):
        """See :meth:`~hdeeprm.simulation.recording.Recorder.job_finished`: the job's row, written now."""
        cdef double sub, run, turnaround, stretch
        if state is self.rejected or allocation is None:
            self.write(self.python_row(job, self.workload, state, start, finish, allocation, energy, reason) + "\n")
            return
        sub = job.subtime
        run = finish - start
        turnaround = finish - sub
        stretch = self.stretch(turnaround, run)
        if energy != energy:
            energy = -1.0
        row = self.row
        row.size = 0
        self._field(job.id)
        row.add_text(self.name)
        row.add_char(b',')
        self._field(job.profile.name)
        self._number(sub)
        self._field(job.res)
        self._number(job.walltime)
        row.add("1," if state is self.success else "0,", 2)
        self._field(state.value)
        self._number(start)
        self._number(run)
        self._number(finish)
        self._number(start - sub)
        self._number(turnaround)
        self._number(stretch)
        self._hosts(allocation)
        row.add_char(b',')
        self._number(energy)
        row.add('""\n', 3)
        self.write(row.pop())
