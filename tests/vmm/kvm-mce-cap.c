// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kvm-mce-cap: the MCG_CAP bits this host's KVM lets a VMM give its
 * guests (KVM_X86_GET_MCE_CAP_SUPPORTED), as "mcg_cap=0x... banks=N ser=0|1".
 * MCG_SER_P (bit 24) is what lets a guest recover from a machine check;
 * the bank count is KVM_CHECK_EXTENSION(KVM_CAP_MCE).
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
	uint64_t cap = 0;
	int fd = open("/dev/kvm", O_RDWR);

	if (fd < 0) {
		perror("kvm-mce-cap: /dev/kvm");
		return 1;
	}
	if (ioctl(fd, KVM_X86_GET_MCE_CAP_SUPPORTED, &cap) < 0) {
		perror("kvm-mce-cap: KVM_X86_GET_MCE_CAP_SUPPORTED");
		return 1;
	}
	/* The bank count comes from KVM_CHECK_EXTENSION, not the caps. */
	printf("mcg_cap=0x%llx banks=%d ser=%d\n", (unsigned long long)cap,
	       ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_MCE), (int)(cap >> 24 & 1));
	close(fd);
	return 0;
}
