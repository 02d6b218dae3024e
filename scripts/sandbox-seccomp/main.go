// Command sandbox-seccomp writes StackShip's sandbox seccomp filter: a classic BPF program (the
// raw `struct sock_filter` array, native byte order) for `bwrap --seccomp FD`. It is compiled and
// run once by scripts/bootstrap-tools, which writes its output to .tools/seccomp/.
//
// The policy allows every system call except those a tofu plan or apply (tofu, its providers,
// local-exec shells, the sandbox launcher) never needs and that would widen what the sandbox can
// reach: debugging other processes, mounts and namespaces, kernel keyrings, eBPF, perf, kernel
// modules, kexec, swap, reboot, the clock, raw I/O ports. They fail with EPERM. clone3 fails with
// ENOSYS (its flags sit in memory, out of a filter's reach), so libc and Go fall back to clone,
// whose namespace flags are refused. A system call of another architecture (the 32-bit x86 ABI,
// x32) fails with ENOSYS, so the list cannot be bypassed through a different syscall table.
//
//	sandbox-seccomp -o FILE      write the filter
//	sandbox-seccomp -list        print the refused system calls, one a line
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"runtime"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Refused with EPERM.
var refused = []string{
	// Other processes' memory and execution.
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	// Mounts, namespaces, root changes.
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"open_by_handle_at", "name_to_handle_at",
	// Kernel keyrings.
	"keyctl", "add_key", "request_key",
	// eBPF, perf, fanotify, userfaultfd, io_uring: large kernel attack surface no run needs.
	"bpf", "perf_event_open", "fanotify_init", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	// Kernel modules, kexec, reboot, swap, accounting, quotas, the kernel log.
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "syslog",
	// The system clock.
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	// Raw I/O ports, terminals, obsolete or dangerous leftovers.
	"iopl", "ioperm", "vhangup", "uselib", "lookup_dcookie", "personality",
	"nfsservctl", "create_module", "get_kernel_syms", "query_module",
}

// clone flags that create namespaces: refused (the sandbox has its own already).
var namespaceFlags = []uint64{
	unix.CLONE_NEWNS, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER,
	unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWCGROUP, unix.CLONE_NEWTIME,
}

func policy() seccomp.Policy {
	var names []string
	for _, name := range refused {
		if _, ok := arch.X86_64.SyscallNames[name]; ok || runtime.GOARCH != "amd64" {
			names = append(names, name)
		}
	}
	var clone []seccomp.NameWithConditions
	for _, flag := range namespaceFlags {
		clone = append(clone, seccomp.NameWithConditions{
			Name:       "clone",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: flag}},
		})
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Names: names, NamesWithCondtions: clone, Action: seccomp.ActionErrno},
		},
	}
}

func main() {
	out := flag.String("o", "", "write the filter to this file")
	list := flag.Bool("list", false, "print the refused system calls")
	flag.Parse()
	if *list {
		for _, name := range refused {
			fmt.Println(name)
		}
		fmt.Println("clone3 (ENOSYS)")
		fmt.Println("clone with a CLONE_NEW* flag")
		return
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: sandbox-seccomp -o FILE | -list")
		os.Exit(2)
	}
	p := policy()
	// clone3 first, with its own errno.
	body, err := p.Assemble()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-seccomp:", err)
		os.Exit(1)
	}
	info, err := arch.GetInfo("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-seccomp:", err)
		os.Exit(1)
	}
	clone3, ok := info.SyscallNames["clone3"]
	if !ok {
		fmt.Fprintln(os.Stderr, "sandbox-seccomp: no clone3 on", info.Name)
		os.Exit(1)
	}
	enosys := uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)
	program := []bpf.Instruction{
		// Another architecture's syscall table: refused outright (the policy below would allow it).
		bpf.LoadAbsolute{Off: 4, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: enosys},
		bpf.LoadAbsolute{Off: 0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(clone3 | info.SeccompMask), SkipTrue: 1},
		bpf.RetConstant{Val: enosys},
	}
	program = append(program, body...)
	raw, err := bpf.Assemble(program)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-seccomp:", err)
		os.Exit(1)
	}
	buf := make([]byte, 0, 8*len(raw))
	for _, ins := range raw {
		buf = binary.NativeEndian.AppendUint16(buf, ins.Op)
		buf = append(buf, ins.Jt, ins.Jf)
		buf = binary.NativeEndian.AppendUint32(buf, ins.K)
	}
	tmp := *out + ".partial"
	if err := os.WriteFile(tmp, buf, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-seccomp:", err)
		os.Exit(1)
	}
	if err := os.Rename(tmp, *out); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-seccomp:", err)
		os.Exit(1)
	}
}
