# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled path of :class:`~hdeeprm.simulation.pstates.HostPstates` on its lists (platforms of up to
:data:`~hdeeprm.simulation.runs.ARRAYS_ABOVE` hosts).

Every job start and end switches the pstates of a few hosts and sums their wattages;
:class:`ListPstates` does the usual cases (groups of up to :data:`~hdeeprm.simulation.energy.SMALL` hosts in
ascending order, the workload manager's, and the lockstep speed and wattages of a job of up to ``SMALL``
hosts) on the same Python lists as ``HostPstates.switch_groups``, ``switch`` and ``summarise``, which stay
the pure-Python path for every other case and when this extension is not built. The sums are made in the
same order with the same IEEE 754 double operations as :func:`~hdeeprm.summation.left_sum` (``0.0 + x0 + x1
...``, left to right, on every Python version), so both paths
give the same figures to the bit (``tests/simulation/test_pstates_kernel.py``).
"""
cdef enum:
    MAX_SMALL = 32   # the most ``small`` may be (the length of summarise's buffer of host ids)


cdef class ListPstates:
    """Pstate switches and job sums on a HostPstates' lists (its list mode).

    Args:
        cur: The HostPstates' ``cur``: three lists of nb_hosts floats (speed FLOP/s, Idle W, AllCores W).
        pstate: Its ``pstate`` list (nb_hosts ints).
        tab: Its ``tab``: per pstate, the (speed, Idle, AllCores) lists of every host.
        small: The most hosts of a group or a job done here: :data:`~hdeeprm.simulation.energy.SMALL`, up to
            which the Python path sums left to right (NumPy's pairwise sums above), at most 32.

    Raises:
        ValueError: ``small`` above 32.
    """

    cdef list speed, idle, comp, pstate, tab
    cdef Py_ssize_t nb_hosts, small

    def __init__(self, list cur, list pstate, list tab, Py_ssize_t small):
        if small > MAX_SMALL:
            raise ValueError(f"ListPstates: small must be at most {MAX_SMALL}, got {small}")
        self.speed, self.idle, self.comp = cur
        self.pstate, self.tab = pstate, tab
        self.nb_hosts = len(pstate)
        self.small = small

    cdef bint _fits(self, object alloc, object p):
        """Whether a group is for this path: a list of 1..small ascending host ids, a known pstate."""
        cdef list hosts
        cdef Py_ssize_t n, k
        cdef long long h, prev = -1
        if type(alloc) is not list or type(p) is not int:
            return False
        hosts = <list> alloc
        n = len(hosts)
        if n < 1 or n > self.small or not 0 <= <long long> p < len(self.tab):
            return False
        for k in range(n):
            if type(hosts[k]) is not int:
                return False
            h = hosts[k]
            if h <= prev or h >= self.nb_hosts:
                return False
            prev = h
        return True

    def switch_groups(self, list groups, list host_job, account):
        """``HostPstates.switch_groups`` of ascending groups, or None (nothing done) when one is not for this path.

        Args:
            groups: ``(host ids, pstate)`` of each group.
            host_job: Job index on each host, -1 when free (a list).
            account: The energy account (told each group's Idle change), or None.

        Returns:
            ``(jobs on the switched hosts, wattmins, hosts switched)`` as ``HostPstates.switch_groups`` returns
            them (the set may lack the -1 the Python path leaves in it), or None.
        """
        cdef Py_ssize_t g, k, n, n_switched = 0
        cdef list hosts, new_speed, new_idle, new_comp
        cdef list cur_speed = self.speed, cur_idle = self.idle, cur_comp = self.comp, pstate = self.pstate
        cdef object h, j
        cdef double new, old, d
        cdef tuple row
        for g in range(len(groups)):   # all or nothing: checked before anything changes
            alloc, p = groups[g]
            if not self._fits(alloc, p):
                return None
        jobs_here = set()
        wattmins = [] if account is None else [account.wattmin]
        for g in range(len(groups)):
            alloc, p = groups[g]
            hosts = <list> alloc
            n = len(hosts)
            n_switched += n
            row = <tuple> self.tab[<Py_ssize_t> p]
            new_speed, new_idle, new_comp = row
            new = old = 0.0
            for k in range(n):   # the jobs on these hosts, and the sums of their new and old Idle wattages
                h = hosts[k]
                j = host_job[<Py_ssize_t> h]
                if <long long> j >= 0:
                    jobs_here.add(j)
                new += <double> new_idle[<Py_ssize_t> h]
                old += <double> cur_idle[<Py_ssize_t> h]
            if n == 1:   # HostPstates.switch: the sum of one value is that value (not 0.0 + it)
                h = hosts[0]
                d = <double> new_idle[<Py_ssize_t> h] - <double> cur_idle[<Py_ssize_t> h]
            else:
                d = new - old
            for k in range(n):
                h = hosts[k]
                cur_speed[<Py_ssize_t> h] = new_speed[<Py_ssize_t> h]
                cur_idle[<Py_ssize_t> h] = new_idle[<Py_ssize_t> h]
                cur_comp[<Py_ssize_t> h] = new_comp[<Py_ssize_t> h]
                pstate[<Py_ssize_t> h] = p
            if account is not None:
                account.idle_switched(d)
                wattmins.append(account.wattmin)
        return jobs_here, wattmins, n_switched

    def summarise(self, hosts, idx):
        """``HostPstates.summarise`` of 1..small hosts (a slice of one run, or a tuple of ids), or None.

        Returns:
            ``(lockstep speed FLOP/s, Idle W, AllCores W)``, or None when the hosts are not for this path.
        """
        cdef Py_ssize_t start, k, n, h
        cdef Py_ssize_t[MAX_SMALL] at   # the host ids, in the order the sums run
        cdef tuple ids
        cdef double low, x, idle, comp
        cdef list speed = self.speed, cur_idle = self.idle, cur_comp = self.comp
        if type(idx) is slice:
            if idx.step is not None or idx.start is None or idx.stop is None:
                return None
            start = idx.start
            n = <Py_ssize_t> idx.stop - start
            if n < 1 or n > self.small or start < 0 or start + n > self.nb_hosts:
                return None
            for k in range(n):
                at[k] = start + k
        elif type(hosts) is tuple:
            ids = <tuple> hosts
            n = len(ids)
            if n < 1 or n > self.small:
                return None
            for k in range(n):
                if type(ids[k]) is not int or not 0 <= <long long> ids[k] < self.nb_hosts:
                    return None
                at[k] = ids[k]
        else:
            return None
        low = speed[at[0]]
        idle = comp = 0.0
        for k in range(n):
            h = at[k]
            x = speed[h]
            if x < low:
                low = x
            idle += <double> cur_idle[h]
            comp += <double> cur_comp[h]
        return low, idle, comp
