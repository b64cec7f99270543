"""The TA's pages: the TA page and its sections (admin), the course setup and settings, the
audit log, borrowed kernels. Every route here depends on PageTA (admin.py): a student gets 403."""
