/* print_make.c - a make that prints its arguments, one per line, and
 * exits 0: test_pool.sh's make of 1,500 keys per backend, as a small static
 * program (a shell script's start cost about 2.5 times this one's CPU on
 * a small VM: stress_make.c). */
#include <stdio.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) puts(argv[i]);
	return fflush(stdout) == 0 ? 0 : 1;
}
