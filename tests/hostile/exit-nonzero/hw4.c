/* Exits with status 3 after writing nothing. */
int main(void) { return 3; }
