/*
 * replay.c - run the fuzz target over every file of a corpus directory
 * (after zstd's regression_driver.c), so the corpus is replayed under
 * ctest on every build without libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv);

int main(int argc, char **argv)
{
	DIR *d;
	struct dirent *e;
	int n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_replay CORPUS_DIR\n");
		return 2;
	}
	d = opendir(argv[1]);
	if (!d) {
		perror(argv[1]);
		return 1;
	}
	while ((e = readdir(d))) {
		char path[4096];
		FILE *f;
		long len;
		uint8_t *buf;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		fseek(f, 0, SEEK_SET);
		buf = malloc((size_t)(len > 0 ? len : 1));
		if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len)
			LLVMFuzzerTestOneInput(buf, (size_t)len);
		free(buf);
		fclose(f);
		n++;
	}
	closedir(d);
	printf("replayed %d corpus files\n", n);
	return n > 0 ? 0 : 1;
}
