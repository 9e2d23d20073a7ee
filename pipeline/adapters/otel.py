"""placeholder while building"""
def convert_session(items, ctx):
    raise NotImplementedError
