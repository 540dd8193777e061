print("hello from crush")
